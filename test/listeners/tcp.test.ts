// TCP listener: accept, echo, counters (current_conns, shutdown_count), max_connections, stop.
import { once } from "node:events";
import { connect, createServer, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createListener } from "../../src/listeners/create-listener.ts";
import { formatListenOn, ListenerError } from "../../src/listeners/listener.ts";
import type { ConnectionHandler } from "../../src/listeners/types.ts";
import { captureLogger, Fleet, listenerSettings, recordingHandler, settled } from "./helpers.ts";

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
}

const fleet = new Fleet();
afterEach(() => fleet.cleanup());

async function dial(port: number): Promise<Socket> {
  const socket = fleet.own(connect({ host: "127.0.0.1", port }));
  await once(socket, "connect");
  return socket;
}

describe("tcp listener", () => {
  it("hands the socket to the handler with its metadata and echoes bytes", async () => {
    const rec = recordingHandler({ echo: true });
    const listener = await fleet.start(
      createListener(listenerSettings("tcp"), rec.handler, {
        dataDir: "/nonexistent",
        logger: captureLogger(),
      }),
    );
    expect(listener.port).toBeGreaterThan(0);
    expect(listener.address()).toEqual({ host: "127.0.0.1", port: listener.port });

    const client = await dial(listener.port);
    const conn = await rec.next();
    expect(conn.info).toEqual({
      listener: "mqtt:tcp:test",
      protocol: "mqtt:tcp",
      zone: "external",
      peerHost: "127.0.0.1",
      peerPort: client.localPort,
      sockPort: listener.port,
    });
    // The broker corks/uncorks: it must get the net.Socket itself.
    expect(typeof (conn.stream as Socket).setNoDelay).toBe("function");

    client.write(Buffer.from([0x10, 0x02, 0xaa, 0xbb]));
    const [echoed] = (await once(client, "data")) as [Buffer];
    expect([...echoed]).toEqual([0x10, 0x02, 0xaa, 0xbb]);
  });

  it("counts current_conns up and down and shutdown_count by reason", async () => {
    const rec = recordingHandler();
    const listener = await fleet.start(
      createListener(listenerSettings("tcp"), rec.handler, {
        dataDir: "/nonexistent",
        logger: captureLogger(),
      }),
    );
    expect(listener.info()).toEqual({
      protocol: "mqtt:tcp",
      identifier: "mqtt:tcp:test",
      listen_on: `127.0.0.1:${listener.port}`,
      acceptors: 8,
      max_conns: 100,
      current_conns: 0,
      shutdown_count: [],
    });

    const a = await dial(listener.port);
    await dial(listener.port);
    const [connA, connB] = [await rec.next(), await rec.next()];
    expect(listener.info().current_conns).toBe(2);

    // The broker kicks A: reports the reason first, then closes.
    connA.closed("kicked");
    connA.stream.destroy();
    await settled(a, "close");
    expect(listener.info().current_conns).toBe(1);

    // B's client leaves: the handler reports 'closed' when the stream closes.
    const bClosed = settled(connB.stream, "close");
    connB.closed("keepalive_timeout");
    connB.closed("closed"); // a second report is ignored
    connB.stream.end();
    await bClosed;
    expect(listener.info()).toMatchObject({
      current_conns: 0,
      shutdown_count: { kicked: 1, keepalive_timeout: 1 },
    });
  });

  it("refuses a connection beyond max_connections at once and counts max_conns", async () => {
    const rec = recordingHandler();
    const listener = await fleet.start(
      createListener(listenerSettings("tcp", { maxConnections: 1 }), rec.handler, {
        dataDir: "/nonexistent",
        logger: captureLogger(),
      }),
    );
    await dial(listener.port);
    await rec.next();
    const refused = fleet.own(connect({ host: "127.0.0.1", port: listener.port }));
    await settled(refused, "close");
    expect(rec.accepted).toHaveLength(1);
    expect(listener.info()).toMatchObject({
      current_conns: 1,
      max_conns: 1,
      shutdown_count: { max_conns: 1 },
    });
  });

  it("survives a client reset and stop() destroys held connections", async () => {
    const rec = recordingHandler();
    const listener = await fleet.start(
      createListener(listenerSettings("tcp"), rec.handler, {
        dataDir: "/nonexistent",
        logger: captureLogger(),
      }),
    );
    const resetter = await dial(listener.port);
    const first = await rec.next();
    const firstClosed = settled(first.stream, "close");
    resetter.resetAndDestroy();
    await firstClosed;

    const held = await dial(listener.port);
    await rec.next();
    const heldClosed = settled(held, "close");
    await listener.stop();
    await heldClosed;
    expect(listener.info()).toMatchObject({ current_conns: 0, shutdown_count: { closed: 2 } });

    // A stopped listener can start again.
    await listener.start();
    await dial(listener.port);
    await rec.next();
  });

  it("tells a handler's StreamOwner of error and close through one listener per event", async () => {
    const events: string[] = [];
    let stream: Socket | undefined;
    const handler: ConnectionHandler = (s) => {
      stream = s as Socket;
      return {
        streamError: () => void events.push("error"),
        streamClosed: () => {
          events.push("close");
          return "owner_reason";
        },
      };
    };
    const listener = await fleet.start(
      createListener(listenerSettings("tcp"), handler, { dataDir: "/nonexistent", logger: captureLogger() }),
    );
    const client = await dial(listener.port);
    await until(() => stream !== undefined);
    const s = stream as Socket;
    // The listener's own pair only: Node keeps a function, not an array, per event.
    expect(s.listenerCount("error")).toBe(1);
    expect(s.listenerCount("close")).toBe(1);
    expect(listener.info()).toMatchObject({ current_conns: 1 });
    const closed = settled(s, "close");
    s.destroy(new Error("boom"));
    await closed;
    client.destroy();
    expect(events).toEqual(["error", "close"]);
    expect(listener.info()).toMatchObject({ current_conns: 0, shutdown_count: { owner_reason: 1 } });
  });

  it("rejects start() when the port is taken", async () => {
    const blocker = createServer();
    blocker.listen(0, "127.0.0.1");
    await once(blocker, "listening");
    const port = (blocker.address() as { port: number }).port;
    try {
      const listener = createListener(
        listenerSettings("tcp", { bind: { host: "127.0.0.1", port } }),
        recordingHandler().handler,
        {
          dataDir: "/nonexistent",
          logger: captureLogger(),
        },
      );
      await expect(listener.start()).rejects.toBeInstanceOf(ListenerError);
    } finally {
      blocker.close();
    }
  });

  it("formats listen_on as the bare port for a wildcard address", () => {
    expect(formatListenOn("0.0.0.0", 1883)).toBe("1883");
    expect(formatListenOn("::", 1883)).toBe("1883");
    expect(formatListenOn("127.0.0.1", 11883)).toBe("127.0.0.1:11883");
  });
});
