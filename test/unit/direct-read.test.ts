// Direct reads of accepted plain TCP sockets (listeners/direct-read.ts), on real loopback
// sockets: this Node offers them (a Node that stops doing so fails here, not silently slower),
// every chunk is a copy of its own, pause() stops the handle's reads and resume() restarts them,
// the peer's end still ends the socket, and any other stream keeps its 'data' events.

import { once } from "node:events";
import { connect, createServer, type Server, type Socket } from "node:net";
import { PassThrough } from "node:stream";
import { TLSSocket } from "node:tls";
import { afterEach, describe, expect, it } from "vitest";
import { readDirect } from "../../src/listeners/direct-read.ts";
import { waitUntil } from "../helpers/wait.ts";

const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

/** A connected pair: the server's accepted socket (switched to direct reads) and the client. */
async function pair(chunks: Buffer[]): Promise<{ accepted: Socket; client: Socket; switched: boolean }> {
  const server = createServer();
  servers.push(server);
  let switched = false;
  const accepted = new Promise<Socket>((resolve) => {
    server.once("connection", (s: Socket) => {
      switched = readDirect(s, (chunk) => chunks.push(chunk));
      sockets.push(s);
      resolve(s);
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  const client = connect(port, "127.0.0.1");
  sockets.push(client);
  await once(client, "connect");
  return { accepted: await accepted, client, switched };
}

const received = (chunks: Buffer[]) => Buffer.concat(chunks).toString();

describe("direct reads of accepted TCP sockets", () => {
  it("are offered by this Node and deliver every byte, each chunk a copy of its own", async () => {
    const chunks: Buffer[] = [];
    const { client, switched } = await pair(chunks);
    expect(switched).toBe(true);
    client.write("first");
    await waitUntil(() => received(chunks) === "first", "first read");
    const first = chunks[0];
    client.write("SECOND");
    await waitUntil(() => received(chunks) === "firstSECOND", "second read");
    // The reads share one buffer: a chunk that viewed it would now read "SECON".
    expect(first.toString()).toBe("first");
    const big = Buffer.alloc(200_000, "x");
    client.write(big);
    await waitUntil(() => Buffer.concat(chunks).length === 11 + big.length, "a large write");
  });

  it("stop while paused and start again on resume", async () => {
    const chunks: Buffer[] = [];
    const { accepted, client } = await pair(chunks);
    const handle = (accepted as unknown as { _handle: { reading: boolean } })._handle;
    accepted.pause();
    expect(handle.reading).toBe(false);
    client.write("held");
    accepted.resume();
    expect(handle.reading).toBe(true);
    await waitUntil(() => received(chunks) === "held", "the bytes written while paused");
  });

  it("still end and close the socket when the peer ends", async () => {
    const chunks: Buffer[] = [];
    const { accepted, client } = await pair(chunks);
    const ended = once(accepted, "end");
    const closed = once(accepted, "close");
    client.end("bye");
    await ended;
    await closed;
    expect(received(chunks)).toBe("bye");
  });

  it("leave other streams, a TLS socket and an already switched socket alone", async () => {
    expect(readDirect(new PassThrough(), () => {})).toBe(false);
    expect(readDirect(new TLSSocket(new PassThrough() as never), () => {})).toBe(false);
    const { accepted } = await pair([]);
    expect(readDirect(accepted, () => {})).toBe(false);
  });
});
