// The inter-node link (src/cluster/link/): two or three NodeLink instances in one process on
// 127.0.0.1, port 0. Handshake and refusals (cookie, version), byte-exact forwarding and order
// under a burst, batching, calls, reconnect with queued messages, simultaneous dial, bad input
// from a peer, keepalive, backpressure, TLS, and a clean stop.

import net from "node:net";
import { generate } from "selfsigned";
import { afterEach, describe, expect, it } from "vitest";
import type { Message } from "../../src/broker/types.ts";
import { makeMessage } from "../../src/broker/types.ts";
import { FrameReader } from "../../src/cluster/link/frame-reader.ts";
import { proof } from "../../src/cluster/link/handshake.ts";
import { LinkError, type LinkOptions, NodeLink } from "../../src/cluster/link/index.ts";
import {
  decodeChallenge,
  decodeHello,
  decodeRefuse,
  encodeAuth,
  encodeChallenge,
  encodeHello,
  encodeWelcome,
  Kind,
  MAGIC,
  PROTOCOL_VERSION,
} from "../../src/cluster/link/protocol.ts";
import { BufReader, BufWriter } from "../../src/cluster/link/wire.ts";
import type { Logger } from "../../src/telemetry/logger.ts";

interface LogLine {
  level: string;
  obj: object | string;
  msg?: string;
}

function capturingLogger(lines: LogLine[]): Logger {
  const at =
    (level: string) =>
    (obj: object | string, msg?: string): void => {
      lines.push({ level, obj, msg });
    };
  const l: Logger = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error"), child: () => l };
  return l;
}

interface TestNode {
  link: NodeLink;
  name: string;
  received: { from: string; msg: Message }[];
  peerEvents: { node: string; up: boolean }[];
  linkErrors: { node: string; err: LinkError }[];
  logs: LogLine[];
  address(): string;
}

const links: NodeLink[] = [];
const sockets: net.Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(links.splice(0).map((l) => l.stop()));
});

async function node(
  name: string,
  over: Partial<LinkOptions> & { onCall?: LinkOptions["onCall"] } = {},
  start = true,
): Promise<TestNode> {
  const t: TestNode = {
    name,
    received: [],
    peerEvents: [],
    linkErrors: [],
    logs: [],
    link: undefined as unknown as NodeLink,
    address: () => `127.0.0.1:${t.link.port}`,
  };
  t.link = new NodeLink({
    nodeName: name,
    cookie: "secret-cookie",
    bind: { host: "127.0.0.1", port: 0 },
    logger: capturingLogger(t.logs),
    onForward: (from, msgs) => {
      for (const msg of msgs) t.received.push({ from, msg });
    },
    onCall: async (from, method, args) => ({ from, method, args, at: name }),
    onPeer: (n, up) => t.peerEvents.push({ node: n, up }),
    onLinkError: (n, err) => t.linkErrors.push({ node: n, err }),
    ...over,
  });
  links.push(t.link);
  if (start) await t.link.start();
  return t;
}

async function waitFor(cond: () => boolean, what: string, timeoutMs = 8000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function connected(a: TestNode, b: TestNode): boolean {
  return a.link.peers().some((p) => p.node === b.name && p.connected);
}

async function linked(a: TestNode, b: TestNode): Promise<void> {
  a.link.addPeer(b.name, b.address());
  await waitFor(() => connected(a, b) && connected(b, a), `${a.name} <-> ${b.name}`);
}

function msg(i: number, extra: Partial<Message> = {}): Message {
  const m = makeMessage({ topic: `t/${i}`, payload: Buffer.from(String(i)), qos: 1, retain: false, from: "pub" });
  return Object.assign(m, extra);
}

/** A fake node speaking the protocol by hand: connects to `port` and completes the handshake. */
async function rawPeer(
  port: number,
  name: string,
  cookie = "secret-cookie",
): Promise<{ socket: net.Socket; frames: Buffer[] }> {
  const socket = net.connect({ host: "127.0.0.1", port });
  sockets.push(socket);
  const frames: Buffer[] = [];
  const reader = new FrameReader(64 * 1024 * 1024);
  socket.on("data", (c: Buffer) =>
    reader.push(c, (f) => {
      frames.push(Buffer.from(f));
      return true;
    }),
  );
  socket.on("error", () => {});
  await new Promise<void>((r) => socket.once("connect", () => r()));
  const nonce = Buffer.alloc(32, 7);
  socket.write(encodeHello({ version: PROTOCOL_VERSION, nonce, node: name }));
  await waitFor(() => frames.length >= 1, "CHALLENGE");
  const ch = frames.shift()!;
  expect(ch[0]).toBe(Kind.challenge);
  const c = decodeChallenge(new BufReader(ch, 1));
  const input = {
    version: PROTOCOL_VERSION,
    dialer: name,
    acceptor: c.node,
    dialerNonce: nonce,
    acceptorNonce: c.nonce,
  };
  socket.write(encodeAuth(proof(cookie, "dialer", input)));
  await waitFor(() => frames.length >= 1, "WELCOME");
  expect(frames.shift()![0]).toBe(Kind.welcome);
  return { socket, frames };
}

function rawFrame(kind: number, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(body.length + 1, 0);
  head[4] = kind;
  return Buffer.concat([head, body]);
}

function closedPromise(socket: net.Socket): Promise<void> {
  return new Promise((r) => (socket.closed || socket.destroyed ? r() : socket.once("close", () => r())));
}

describe("NodeLink handshake", () => {
  it("links two nodes proving the cookie, reports peers both ways", async () => {
    const a = await node("a@127.0.0.1");
    const b = await node("b@127.0.0.1");
    expect(a.link.port).toBeGreaterThan(0);
    await linked(a, b);
    expect(a.link.peers()).toEqual([
      { node: b.name, address: b.address(), connected: true, direction: "out", queued: 0 },
    ]);
    // b learned a from its inbound connection only.
    expect(b.link.peers()).toEqual([{ node: a.name, address: "", connected: true, direction: "in", queued: 0 }]);
    expect(a.peerEvents).toEqual([{ node: b.name, up: true }]);
    expect(b.peerEvents).toEqual([{ node: a.name, up: true }]);
    // The link works in both directions over the one connection.
    await expect(b.link.call(a.name, "ping", [1])).resolves.toEqual({
      from: b.name,
      method: "ping",
      args: [1],
      at: a.name,
    });
    expect(a.link.stats().connections).toBe(1);
    expect(b.link.stats().connections).toBe(1);
    // addPeer is idempotent.
    a.link.addPeer(b.name, b.address());
    expect(a.link.stats().connections).toBe(1);
  });

  it("refuses a peer with another cookie on both sides, never revealing either cookie", async () => {
    const a = await node("a@127.0.0.1", { cookie: "cookie-of-a" });
    const b = await node("b@127.0.0.1", { cookie: "cookie-of-b" });
    a.link.addPeer(b.name, b.address());
    // A call made while the first attempt runs is told why it failed.
    const err = await a.link.call(b.name, "join", {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LinkError);
    expect((err as LinkError).code).toBe("cookie_mismatch");
    await waitFor(() => b.linkErrors.length > 0 && a.linkErrors.length > 0, "refusals");
    expect(a.linkErrors[0]).toMatchObject({ node: b.name, err: { code: "cookie_mismatch" } });
    expect(b.linkErrors[0]).toMatchObject({ node: a.name, err: { code: "cookie_mismatch" } });
    const peer = a.link.peers()[0];
    expect(peer).toMatchObject({ node: b.name, connected: false, lastError: { code: "cookie_mismatch" } });
    expect(connected(b, a)).toBe(false);
    // Later calls fail at once with the same reason.
    await expect(a.link.call(b.name, "x", null)).rejects.toMatchObject({ code: "cookie_mismatch" });
    // Both log a warning naming the peer; no log line carries a cookie.
    const warnA = a.logs.find((l) => l.level === "warn");
    const warnB = b.logs.find((l) => l.level === "warn");
    expect(JSON.stringify(warnA)).toContain(b.name);
    expect(JSON.stringify(warnA)).toContain("cookie mismatch");
    expect(JSON.stringify(warnB)).toContain(a.name);
    const all = JSON.stringify([a.logs, b.logs]);
    expect(all).not.toContain("cookie-of-a");
    expect(all).not.toContain("cookie-of-b");
  });

  it("refuses another protocol version, saying so", async () => {
    const b = await node("b@127.0.0.1");
    const socket = net.connect({ host: "127.0.0.1", port: b.link.port });
    sockets.push(socket);
    const frames: Buffer[] = [];
    const reader = new FrameReader(4096);
    socket.on("data", (c: Buffer) => reader.push(c, (f) => frames.push(Buffer.from(f)) > 0));
    await new Promise<void>((r) => socket.once("connect", () => r()));
    const w = new BufWriter(64);
    w.raw(MAGIC);
    w.u16(PROTOCOL_VERSION + 1);
    w.raw(Buffer.alloc(40)); // whatever version 2 sends next
    socket.write(rawFrame(Kind.hello, w.take()));
    await closedPromise(socket);
    expect(frames).toHaveLength(1);
    expect(frames[0][0]).toBe(Kind.refuse);
    expect(decodeRefuse(new BufReader(frames[0], 1)).reason).toBe("version_mismatch");
    await waitFor(() => b.linkErrors.length > 0, "refusal logged");
    expect(b.linkErrors[0].err.code).toBe("version_mismatch");
  });

  it("a dialer refuses a node speaking another version", async () => {
    const a = await node("a@127.0.0.1");
    const server = net.createServer((s) => {
      sockets.push(s);
      s.once("data", () => {
        const w = new BufWriter(128);
        w.u16(PROTOCOL_VERSION + 1);
        w.raw(Buffer.alloc(80));
        s.write(rawFrame(Kind.challenge, w.take()));
      });
      s.on("error", () => {});
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    try {
      a.link.addPeer("future@127.0.0.1", `127.0.0.1:${(server.address() as net.AddressInfo).port}`);
      await waitFor(() => a.linkErrors.length > 0, "refusal");
      expect(a.linkErrors[0].err.code).toBe("version_mismatch");
      await expect(a.link.call("future@127.0.0.1", "x", null)).rejects.toMatchObject({ code: "version_mismatch" });
    } finally {
      a.link.removePeer("future@127.0.0.1");
      for (const s of sockets.splice(0)) s.destroy();
      await new Promise((r) => server.close(r));
    }
  });

  it("refuses a node that is not the one expected at the address", async () => {
    const a = await node("a@127.0.0.1");
    const b = await node("b@127.0.0.1");
    a.link.addPeer("c@127.0.0.1", b.address());
    await waitFor(() => a.linkErrors.length > 0, "refusal");
    expect(a.linkErrors[0].err.code).toBe("node_mismatch");
    expect(a.linkErrors[0].err.message).toContain(b.name);
  });
});

describe("NodeLink forwarding", () => {
  it("preserves every field byte for byte", async () => {
    const a = await node("a@127.0.0.1");
    const b = await node("b@127.0.0.1");
    await linked(a, b);
    const all = Buffer.alloc(256);
    for (let i = 0; i < 256; i++) all[i] = i;
    const now = Date.now();
    const sent: Message[] = [
      makeMessage({
        from: "client-é",
        fromUsername: "user",
        peerhost: "10.1.2.3:5555",
        topic: "a/b/ç/🙂",
        payload: all,
        qos: 2,
        retain: true,
        properties: {
          payloadFormatIndicator: false,
          messageExpiryInterval: 3600,
          contentType: "application/octet-stream",
          responseTopic: "reply/here",
          correlationData: Buffer.from([0, 255, 1, 254]),
          userProperties: { k: "v", multi: ["x", "", "z"], "": "empty-key", ["__proto__"]: "odd" },
        },
        now: now - 5,
      }),
      makeMessage({ topic: "plain", payload: Buffer.alloc(0), qos: 0, retain: false }),
      makeMessage({
        topic: "$SYS/brokers",
        payload: Buffer.from("x"),
        qos: 1,
        retain: false,
        sys: true,
        fromUsername: "",
        properties: { payloadFormatIndicator: true },
      }),
      makeMessage({ topic: "empty-props", payload: Buffer.from("y"), qos: 1, retain: false, properties: {} }),
      makeMessage({ topic: "big", payload: Buffer.alloc(300_000, 0xab), qos: 1, retain: false }),
    ];
    sent[1].headers = { republishDepth: 2, rule: "r1", nested: { list: [1, "two", null] } };
    sent[1].expiresAt = now + 12345;
    sent[2].headers = { fn: () => 1, keep: true } as Record<string, unknown>;
    for (const m of sent) expect(a.link.forward(b.name, m)).toBe(true);
    await waitFor(() => b.received.length === sent.length, "delivery");
    const strip = ({ seq: _seq, ...rest }: Message) => rest;
    for (let i = 0; i < sent.length; i++) {
      const got = b.received[i];
      expect(got.from).toBe(a.name);
      const expected = strip(sent[i]);
      if (i === 2) expected.headers = { keep: true }; // the JSON-able part
      expect(strip(got.msg)).toStrictEqual(expected);
      expect(got.msg.payload.equals(sent[i].payload)).toBe(true);
    }
    expect(b.received[0].msg.properties?.correlationData?.equals(Buffer.from([0, 255, 1, 254]))).toBe(true);
    expect(Object.getPrototypeOf(b.received[0].msg.properties?.userProperties)).toBe(Object.prototype);
    expect(b.received[1].msg.properties).toBeUndefined();
    expect(b.received[1].msg.fromUsername).toBeUndefined();
    expect(b.received[2].msg.fromUsername).toBe("");
  });

  it("keeps the order of a 50k burst in far fewer frames", async () => {
    const a = await node("a@127.0.0.1");
    const b = await node("b@127.0.0.1");
    await linked(a, b);
    const N = 50_000;
    let refused = 0;
    for (let i = 0; i < N; i++) {
      const m = msg(i, { qos: (i % 3) as 0 | 1 | 2, retain: i % 7 === 0 });
      m.payload = Buffer.alloc(i % 200, i % 256);
      if (!a.link.forward(b.name, m)) refused++;
      // The broker forwards from its I/O callbacks: let the event loop turn now and then.
      if (i % 2000 === 1999) await new Promise((r) => setImmediate(r));
    }
    expect(refused).toBe(0);
    await waitFor(() => b.received.length === N, "50k messages", 15_000);
    for (let i = 0; i < N; i++) {
      const m = b.received[i].msg;
      if (m.topic !== `t/${i}` || m.payload.length !== i % 200 || (m.payload.length > 0 && m.payload[0] !== i % 256)) {
        throw new Error(`message ${i} out of order or damaged: ${m.topic}`);
      }
    }
    const sa = a.link.stats();
    const sb = b.link.stats();
    expect(sa.forwardedOut).toBe(N);
    expect(sb.forwardedIn).toBe(N);
    expect(sa.dropped).toBe(0);
    expect(sa.framesOut).toBeLessThan(N / 50);
    expect(sb.framesIn).toBe(sa.framesOut);
    expect(a.link.peers()[0].queued).toBe(0);
  });

  it("encodes a message forwarded to several peers once and delivers it to each", async () => {
    const a = await node("a@127.0.0.1");
    const b = await node("b@127.0.0.1");
    const c = await node("c@127.0.0.1");
    await linked(a, b);
    await linked(a, c);
    const m = msg(1, { payload: Buffer.from("both") });
    expect(a.link.forward(b.name, m)).toBe(true);
    expect(a.link.forward(c.name, m)).toBe(true);
    await waitFor(() => b.received.length === 1 && c.received.length === 1, "both");
    expect(b.received[0].msg.payload.toString()).toBe("both");
    expect(c.received[0].msg.topic).toBe("t/1");
  });

  it("refuses messages for an unknown peer and counts the drop", async () => {
    const a = await node("a@127.0.0.1");
    expect(a.link.forward("nobody@x", msg(1))).toBe(false);
    expect(a.link.stats().dropped).toBe(1);
  });

  it("bounds a slow peer's queue, respects backpressure and counts drops", async () => {
    const a = await node("a@127.0.0.1", { maxQueueMessages: 500 });
    const fake = await rawPeer(a.link.port, "slow@127.0.0.1");
    fake.socket.pause(); // never reads
    await waitFor(() => connected(a, { name: "slow@127.0.0.1" } as TestNode), "slow peer");
    const big = Buffer.alloc(64 * 1024, 1);
    let refused = 0;
    for (let i = 0; i < 4000 && refused === 0; i++) {
      if (!a.link.forward("slow@127.0.0.1", msg(i, { payload: big }))) refused++;
      if (i % 50 === 0) await new Promise((r) => setImmediate(r));
    }
    expect(refused).toBe(1);
    expect(a.link.stats().dropped).toBe(1);
    expect(a.link.bufferedBytes("slow@127.0.0.1")).toBeGreaterThan(0);
    const peer = a.link.peers().find((p) => p.node === "slow@127.0.0.1")!;
    expect(peer.queued).toBeLessThanOrEqual(500);
    expect(peer.queued).toBeGreaterThan(0);
  });
});

describe("NodeLink calls", () => {
  it("answers, carries remote errors, times out, and fails fast for unknown or unreachable nodes", async () => {
    const a = await node("a@127.0.0.1");
    const b = await node("b@127.0.0.1", {
      onCall: async (_from, method, args) => {
        if (method === "echo") return args;
        if (method === "nothing") return undefined;
        if (method === "hang") return new Promise(() => {});
        throw Object.assign(new Error("no such thing"), { code: "not_found" });
      },
    });
    await linked(a, b);
    const payload = { s: "é", n: [1, 2.5, null], nested: { t: true } };
    await expect(a.link.call(b.name, "echo", payload)).resolves.toEqual(payload);
    await expect(a.link.call(b.name, "nothing", null)).resolves.toBeNull();
    const remote = await a.link.call(b.name, "missing", {}).catch((e: unknown) => e);
    expect(remote).toMatchObject({ code: "remote_error", remote: { message: "no such thing", code: "not_found" } });
    const t0 = Date.now();
    await expect(a.link.call(b.name, "hang", {}, 150)).rejects.toMatchObject({ code: "timeout" });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    await expect(a.link.call("nobody@x", "echo", 1)).rejects.toMatchObject({ code: "unreachable" });
    // Many calls in flight at once, answered in any order, matched by id.
    const many = await Promise.all(Array.from({ length: 200 }, (_, i) => a.link.call(b.name, "echo", i)));
    expect(many).toEqual(Array.from({ length: 200 }, (_, i) => i));
  });

  it("rejects a call to a node nobody listens for", async () => {
    const a = await node("a@127.0.0.1");
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", () => r()));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise((r) => probe.close(r));
    a.link.addPeer("gone@127.0.0.1", `127.0.0.1:${port}`);
    await expect(a.link.call("gone@127.0.0.1", "x", null)).rejects.toMatchObject({ code: "unreachable" });
    await expect(a.link.call("gone@127.0.0.1", "x", null)).rejects.toMatchObject({ code: "unreachable" });
    expect(a.link.peers()[0]).toMatchObject({ connected: false, lastError: { code: "unreachable" } });
  });

  it("rejects calls in flight when the peer goes away", async () => {
    const a = await node("a@127.0.0.1");
    const b = await node("b@127.0.0.1", { onCall: () => new Promise(() => {}) });
    await linked(a, b);
    const p = a.link.call(b.name, "hang", null, 10_000).catch((e: unknown) => e);
    await waitFor(() => b.link.stats().callsIn === 1, "call arrived");
    await b.link.stop();
    expect(await p).toMatchObject({ code: "unreachable" });
  });
});

describe("NodeLink connections", () => {
  it("reconnects to a restarted peer and flushes what was queued meanwhile, in order", async () => {
    const a = await node("a@127.0.0.1");
    const b = await node("b@127.0.0.1");
    await linked(a, b);
    const port = b.link.port;
    await b.link.stop();
    await waitFor(() => !connected(a, b), "a sees b down");
    expect(a.peerEvents).toEqual([
      { node: b.name, up: true },
      { node: b.name, up: false },
    ]);
    const failedDials = () => a.logs.filter((l) => l.msg === "inter-node link attempt failed").length;
    const dialsBefore = failedDials();
    for (let i = 0; i < 1000; i++) expect(a.link.forward(b.name, msg(i))).toBe(true);
    await waitFor(() => failedDials() >= dialsBefore + 2, "a few failed redials");
    expect(a.link.peers()[0].queued).toBe(1000);
    const b2 = await node("b@127.0.0.1", { bind: { host: "127.0.0.1", port } });
    await waitFor(() => b2.received.length === 1000, "queued messages after restart", 10_000);
    expect(b2.received.map((r) => r.msg.topic)).toEqual(Array.from({ length: 1000 }, (_, i) => `t/${i}`));
    expect(a.link.peers()[0]).toMatchObject({ connected: true, queued: 0 });
    expect(a.peerEvents.at(-1)).toEqual({ node: b.name, up: true });
  });

  it("keeps exactly one connection when both nodes dial at once, losing nothing", async () => {
    for (let round = 0; round < 5; round++) {
      const a = await node("a@127.0.0.1");
      const b = await node("b@127.0.0.1");
      // Both know each other before either connects; both have messages waiting.
      a.link.addPeer(b.name, b.address());
      b.link.addPeer(a.name, a.address());
      for (let i = 0; i < 100; i++) {
        a.link.forward(b.name, msg(i));
        b.link.forward(a.name, msg(i));
      }
      await waitFor(() => a.received.length === 100 && b.received.length === 100, "both ways");
      // The losing connection of the two closes.
      await waitFor(
        () => a.link.stats().connections === 1 && b.link.stats().connections === 1,
        "one connection left on each side",
      );
      expect(a.link.stats().connections).toBe(1);
      expect(b.link.stats().connections).toBe(1);
      // The survivor is the one the smaller name dialed.
      expect(a.link.peers()[0]).toMatchObject({ connected: true, direction: "out" });
      expect(b.link.peers()[0]).toMatchObject({ connected: true, direction: "in" });
      expect(a.received.map((r) => r.msg.topic)).toEqual(Array.from({ length: 100 }, (_, i) => `t/${i}`));
      expect(b.received.map((r) => r.msg.topic)).toEqual(Array.from({ length: 100 }, (_, i) => `t/${i}`));
      expect(a.peerEvents).toEqual([{ node: b.name, up: true }]);
      await Promise.all(links.splice(0).map((l) => l.stop()));
    }
  });

  it("lets a silently restarted peer back in once its old connection fails a probe", async () => {
    // a holds a connection it dialed to "b", whose process then hangs without closing it.
    const a = await node("a@127.0.0.1", { deadAfterMs: 60_000 });
    const bName = "b@127.0.0.1";
    const server = net.createServer((s) => {
      sockets.push(s);
      s.on("error", () => {});
      const reader = new FrameReader(4096);
      let hello: ReturnType<typeof decodeHello> | undefined;
      const nonce = Buffer.alloc(32, 9);
      s.on("data", (c: Buffer) =>
        reader.push(c, (f) => {
          if (f[0] === Kind.hello) {
            hello = decodeHello(new BufReader(f, 1));
            const input = {
              version: PROTOCOL_VERSION,
              dialer: hello.node,
              acceptor: bName,
              dialerNonce: hello.nonce,
              acceptorNonce: nonce,
            };
            const mac = proof("secret-cookie", "acceptor", input);
            s.write(encodeChallenge({ version: PROTOCOL_VERSION, nonce, node: bName, mac }));
          } else if (f[0] === Kind.auth) {
            s.write(encodeWelcome());
            s.pause(); // hangs from now on
            server.close(); // and takes no new connections
          }
          return true;
        }),
      );
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    try {
      a.link.addPeer(bName, `127.0.0.1:${(server.address() as net.AddressInfo).port}`);
      await waitFor(() => a.link.peers()[0]?.connected === true, "a linked to the hung b");
      // b restarts elsewhere (membership tells a its new address) and dials a: refused while a's
      // connection is presumed alive, then let in once that one fails a's probe.
      const b = await node(bName);
      a.link.addPeer(bName, b.address());
      expect(a.link.stats().connections).toBe(1);
      b.link.addPeer(a.name, a.address());
      const t0 = Date.now();
      await waitFor(() => connected(b, a) && connected(a, b) && a.link.stats().connections === 1, "b back in", 10_000);
      expect(Date.now() - t0).toBeLessThan(5000);
      a.link.forward(bName, msg(1));
      await waitFor(() => b.received.length === 1, "delivery to the new b");
    } finally {
      for (const s of sockets.splice(0)) s.destroy();
      await new Promise((r) => server.close(r));
    }
  });

  it("three nodes form a full mesh with one connection per pair", async () => {
    const ns = [await node("a@127.0.0.1"), await node("b@127.0.0.1"), await node("c@127.0.0.1")];
    for (const x of ns) for (const y of ns) if (x !== y) x.link.addPeer(y.name, y.address());
    await waitFor(() => ns.every((x) => ns.every((y) => x === y || connected(x, y))), "mesh");
    // Duplicate connections of simultaneous dials close.
    await waitFor(() => ns.every((x) => x.link.stats().connections === 2), "one connection per pair");
    for (const x of ns) expect(x.link.stats().connections).toBe(2);
    for (const x of ns)
      for (const y of ns) if (x !== y) x.link.forward(y.name, msg(1, { topic: `${x.name}>${y.name}` }));
    await waitFor(() => ns.every((x) => x.received.length === 2), "mesh delivery");
  });

  it("closes the link on a garbage frame from a peer and reconnects, without crashing", async () => {
    const a = await node("a@127.0.0.1");
    const b = await node("b@127.0.0.1");
    await linked(a, b);
    // A corrupt FORWARD batch written on a's established socket.
    const internals = a.link as unknown as { peerMap: Map<string, { conn: { socket: net.Socket } }> };
    const socket = internals.peerMap.get(b.name)!.conn.socket;
    socket.write(rawFrame(Kind.forward, Buffer.from([0, 0, 0, 5, 0xff, 0xff, 0xff])));
    await waitFor(() => b.peerEvents.some((e) => !e.up), "b drops the link");
    expect(b.logs.some((l) => l.level === "warn" && JSON.stringify(l).includes(a.name))).toBe(true);
    // a redials; the link comes back and works.
    await waitFor(() => connected(a, b) && connected(b, a), "relinked");
    a.link.forward(b.name, msg(7));
    await waitFor(() => b.received.length === 1, "delivery after relink");
    expect(b.received[0].msg.topic).toBe("t/7");
  });

  it("survives garbage before the handshake and unknown frame kinds after it", async () => {
    const b = await node("b@127.0.0.1");
    const junk = net.connect({ host: "127.0.0.1", port: b.link.port });
    sockets.push(junk);
    junk.on("error", () => {});
    junk.resume();
    junk.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await closedPromise(junk);
    const short = net.connect({ host: "127.0.0.1", port: b.link.port });
    sockets.push(short);
    short.on("error", () => {});
    short.resume();
    short.write(Buffer.from([0, 0, 0, 0])); // empty frame
    await closedPromise(short);
    const fake = await rawPeer(b.link.port, "fake@127.0.0.1");
    await waitFor(() => connected(b, { name: "fake@127.0.0.1" } as TestNode), "fake linked");
    fake.socket.write(rawFrame(0x7f, Buffer.from("??")));
    await closedPromise(fake.socket);
    await waitFor(() => b.link.peers().length === 0, "fake forgotten");
    // b still links with a real node.
    const a = await node("a@127.0.0.1");
    await linked(a, b);
  });

  it("drops a peer that goes silent (keepalive) and pings idle links", async () => {
    const a = await node("a@127.0.0.1", { pingIntervalMs: 40, deadAfterMs: 300 });
    const fake = await rawPeer(a.link.port, "mute@127.0.0.1");
    await waitFor(() => fake.frames.some((f) => f[0] === Kind.ping), "a PING");
    const t0 = Date.now();
    await closedPromise(fake.socket);
    expect(Date.now() - t0).toBeLessThan(2000);
    await waitFor(() => a.peerEvents.some((e) => e.node === "mute@127.0.0.1" && !e.up), "down");
    // Two real nodes with the same settings stay up: they answer pings.
    const b = await node("b@127.0.0.1", { pingIntervalMs: 40, deadAfterMs: 300 });
    await linked(a, b);
    // Past the dead time on both: a silent control peer linked to each after a <-> b is dropped
    // by the same sweep that would have dropped a <-> b had its pings gone unanswered.
    const muteA = await rawPeer(a.link.port, "mute-a@127.0.0.1");
    const muteB = await rawPeer(b.link.port, "mute-b@127.0.0.1");
    await Promise.all([closedPromise(muteA.socket), closedPromise(muteB.socket)]);
    expect(connected(a, b)).toBe(true);
    expect(b.peerEvents.filter((e) => e.node !== "mute-b@127.0.0.1")).toEqual([{ node: a.name, up: true }]);
  });

  it("removePeer closes the link, drops its queue and rejects its calls", async () => {
    const a = await node("a@127.0.0.1");
    const b = await node("b@127.0.0.1", { onCall: () => new Promise(() => {}) });
    await linked(a, b);
    const p = a.link.call(b.name, "hang", null, 10_000);
    a.link.removePeer(b.name);
    await expect(p).rejects.toMatchObject({ code: "closed" });
    expect(a.link.peers()).toEqual([]);
    expect(a.link.forward(b.name, msg(1))).toBe(false);
    await waitFor(() => !connected(b, a), "b sees the close");
  });

  it("runs over TLS", async () => {
    const pems = await generate([{ name: "commonName", value: "svc-node" }], { keyType: "ec", algorithm: "sha256" });
    const tlsOpts = { key: Buffer.from(pems.private), cert: Buffer.from(pems.cert) };
    const a = await node("a@127.0.0.1", { tls: tlsOpts });
    const b = await node("b@127.0.0.1", { tls: tlsOpts });
    await linked(a, b);
    a.link.forward(b.name, msg(1, { payload: Buffer.from("secret payload") }));
    await waitFor(() => b.received.length === 1, "TLS delivery");
    expect(b.received[0].msg.payload.toString()).toBe("secret payload");
    await expect(b.link.call(a.name, "m", 1)).resolves.toMatchObject({ at: a.name });
    // A plain-TCP node cannot talk to a TLS one.
    const plain = await node("p@127.0.0.1");
    plain.link.addPeer(a.name, a.address());
    await waitFor(() => plain.link.peers()[0]?.lastError !== undefined, "plain refused");
    expect(connected(plain, a)).toBe(false);
  });

  it("stop() closes everything, rejects pending calls and leaves no handles", async () => {
    const count = (): Record<string, number> => {
      const c: Record<string, number> = {};
      for (const r of process.getActiveResourcesInfo()) c[r] = (c[r] ?? 0) + 1;
      return c;
    };
    const before = count();
    const a = await node("a@127.0.0.1");
    const b = await node("b@127.0.0.1", { onCall: () => new Promise(() => {}) });
    await linked(a, b);
    a.link.addPeer("gone@127.0.0.1", "127.0.0.1:1"); // a peer being redialed
    const pending = a.link.call(b.name, "hang", null, 60_000).catch((e: unknown) => e);
    a.link.forward(b.name, msg(1));
    await Promise.all([a.link.stop(), b.link.stop()]);
    expect(await pending).toMatchObject({ code: "closed" });
    await expect(a.link.call(b.name, "x", null)).rejects.toMatchObject({ code: "closed" });
    expect(a.link.forward(b.name, msg(2))).toBe(false);
    // Closed sockets release their handles asynchronously: wait for that (the expectations below
    // say what is left if it does not happen).
    const released = (c: Record<string, number>): boolean =>
      ["TCPSocketWrap", "TCPServerWrap", "TCPWRAP"].every((k) => (c[k] ?? 0) === (before[k] ?? 0)) &&
      ["Timeout", "Immediate"].every((k) => (c[k] ?? 0) <= (before[k] ?? 0));
    await waitFor(() => released(count()), "sockets and timers released", 2000).catch(() => undefined);
    const after = count();
    for (const k of ["TCPSocketWrap", "TCPServerWrap", "TCPWRAP"]) expect(after[k] ?? 0, k).toBe(before[k] ?? 0);
    // Timers of earlier tests may have ended meanwhile; none of ours is left.
    for (const k of ["Timeout", "Immediate"]) expect(after[k] ?? 0, k).toBeLessThanOrEqual(before[k] ?? 0);
    expect(a.link.stats().connections).toBe(0);
  });
});
