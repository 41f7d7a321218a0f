// Shared fixtures for listener tests: settings on 127.0.0.1:0, a recording echo handler, a
// capturing logger, temp dirs, and a throw-away PKI generated at run time (no keys in the repo).
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generate } from "selfsigned";
import type { Listener } from "../../src/listeners/listener.ts";
import type {
  ByteStream,
  ConnectionHandler,
  ConnectionInfo,
  ListenerKind,
  ListenerLogger,
  ListenerSettings,
} from "../../src/listeners/types.ts";

export function listenerSettings(kind: ListenerKind, overrides: Partial<ListenerSettings> = {}): ListenerSettings {
  return {
    kind,
    name: "test",
    bind: { host: "127.0.0.1", port: 0 },
    zone: "external",
    maxConnections: 100,
    backlog: 128,
    nodelay: true,
    verify: "verify_none",
    failIfNoPeerCert: false,
    tlsVersions: ["tlsv1.3", "tlsv1.2"],
    mqttPath: "/mqtt",
    handshakeTimeout: 15_000,
    ...overrides,
  };
}

export interface LogEntry {
  level: "warn" | "info";
  obj: object | string;
  msg?: string;
}

export function captureLogger(): ListenerLogger & { entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  return {
    entries,
    warn: (obj, msg) => void entries.push({ level: "warn", obj, msg }),
    info: (obj, msg) => void entries.push({ level: "info", obj, msg }),
  };
}

export interface Accepted {
  stream: ByteStream;
  info: ConnectionInfo;
  /** What the broker does when it ends a connection: names the reason (the first one counts). */
  closed: (reason: string) => void;
  /** Every byte received so far. */
  received: () => Buffer;
  /** Resolves once at least n bytes have arrived. */
  receivedAtLeast: (n: number) => Promise<Buffer>;
}

/**
 * A handler that records each connection. With `echo`, bytes are written back; when the stream
 * closes its owner reports 'closed' unless the test already named another reason.
 */
export function recordingHandler(opts: { echo?: boolean } = {}): {
  handler: ConnectionHandler;
  accepted: Accepted[];
  next: () => Promise<Accepted>;
} {
  const accepted: Accepted[] = [];
  const waiters: Array<(a: Accepted) => void> = [];
  let taken = 0;
  const handler: ConnectionHandler = (stream, info) => {
    let reason: string | undefined;
    const closed = (r: string): void => {
      reason ??= r;
    };
    const chunks: Buffer[] = [];
    const byteWaiters: Array<{ n: number; resolve: (b: Buffer) => void }> = [];
    const received = (): Buffer => Buffer.concat(chunks);
    stream.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      if (opts.echo) stream.write(chunk);
      const all = received();
      for (const w of byteWaiters.filter((w) => all.length >= w.n)) {
        byteWaiters.splice(byteWaiters.indexOf(w), 1);
        w.resolve(all);
      }
    });
    const entry: Accepted = {
      stream,
      info,
      closed,
      received,
      receivedAtLeast: (n) =>
        received().length >= n
          ? Promise.resolve(received())
          : new Promise((resolve) => byteWaiters.push({ n, resolve })),
    };
    accepted.push(entry);
    waiters.shift()?.(entry);
    return { streamError: () => {}, streamClosed: () => reason ?? "closed" };
  };
  const next = (): Promise<Accepted> => {
    const index = taken++;
    const ready = accepted[index];
    return ready !== undefined ? Promise.resolve(ready) : new Promise((resolve) => waiters.push(resolve));
  };
  return { handler, accepted, next };
}

/** Starts listeners and stops them all in `cleanup()`. */
export class Fleet {
  readonly #listeners: Listener[] = [];
  readonly #dirs: string[] = [];
  readonly #closers: Array<() => void> = [];

  async start<L extends Listener>(listener: L): Promise<L> {
    this.#listeners.push(listener);
    await listener.start();
    return listener;
  }

  async tempDir(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), "svc-listeners-"));
    this.#dirs.push(dir);
    return dir;
  }

  /** Registers a client-side resource to destroy at cleanup. */
  own<T extends { destroy(): void } | { terminate(): void } | { end(force: boolean): void }>(thing: T): T {
    this.#closers.push(() => {
      if ("destroy" in thing) thing.destroy();
      else if ("terminate" in thing) thing.terminate();
      else thing.end(true);
    });
    return thing;
  }

  async cleanup(): Promise<void> {
    for (const close of this.#closers.splice(0)) close();
    await Promise.all(this.#listeners.splice(0).map((l) => l.stop()));
    await Promise.all(this.#dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  }
}

export interface Pem {
  key: string;
  cert: string;
}

export interface Pki {
  ca: Pem;
  server: Pem;
  client: Pem;
  /** A client certificate from a CA the server does not trust. */
  stranger: Pem;
}

const CA_EXTENSIONS = [
  { name: "basicConstraints" as const, cA: true, critical: true },
  {
    name: "keyUsage" as const,
    keyCertSign: true,
    cRLSign: true,
    digitalSignature: true,
    critical: true,
  },
];

async function issue(cn: string, ca: Pem, usage: { serverAuth?: boolean; clientAuth?: boolean }): Promise<Pem> {
  const pems = await generate(
    [
      { name: "commonName", value: cn },
      { name: "organizationName", value: "svc-test" },
    ],
    {
      keyType: "ec",
      algorithm: "sha256",
      ca,
      extensions: [
        { name: "basicConstraints", cA: false },
        { name: "keyUsage", digitalSignature: true, keyEncipherment: true },
        { name: "extKeyUsage", ...usage },
        {
          name: "subjectAltName",
          altNames: [
            { type: 2, value: "localhost" },
            { type: 7, ip: "127.0.0.1" },
          ],
        },
      ],
    },
  );
  return { key: pems.private, cert: pems.cert };
}

async function authority(cn: string): Promise<Pem> {
  const pems = await generate([{ name: "commonName", value: cn }], {
    keyType: "ec",
    algorithm: "sha256",
    extensions: CA_EXTENSIONS,
  });
  return { key: pems.private, cert: pems.cert };
}

export async function makePki(): Promise<Pki> {
  const [ca, otherCa] = await Promise.all([authority("svc test CA"), authority("untrusted CA")]);
  const [server, client, stranger] = await Promise.all([
    issue("localhost", ca, { serverAuth: true }),
    issue("client-1", ca, { clientAuth: true }),
    issue("stranger", otherCa, { clientAuth: true }),
  ]);
  return { ca, server, client, stranger };
}

/** Writes the server key, certificate and CA into `dir` and returns listener settings for them. */
export async function writeServerFiles(
  dir: string,
  pki: Pki,
): Promise<Pick<ListenerSettings, "keyfile" | "certfile" | "cacertfile">> {
  const files = {
    keyfile: join(dir, "key.pem"),
    certfile: join(dir, "cert.pem"),
    cacertfile: join(dir, "cacert.pem"),
  };
  await writeFile(files.keyfile, pki.server.key, { mode: 0o600 });
  await writeFile(files.certfile, pki.server.cert);
  await writeFile(files.cacertfile, pki.ca.cert);
  return files;
}

/** Resolves when the emitter emits `event`; 'error' is ignored (many tests expect a refusal). */
export function settled(emitter: NodeJS.EventEmitter, event: string): Promise<unknown[]> {
  emitter.on("error", () => {});
  return new Promise((resolve) => emitter.once(event, (...args: unknown[]) => resolve(args)));
}
