// Serves the management API on its HTTP listeners (`management.listener.http`, 8081, and
// `management.listener.http_v2`, 8080): one Node HTTP server per bind, all answering the same Hono
// application. Each reports itself as an `http:management` listener.

import type { Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import type { Hono } from "hono";
import type { ListenerRecord } from "../services/listeners.ts";

export type ManagementListenerName = "http" | "http_v2";

export interface ManagementBind {
  name: ManagementListenerName;
  host: string;
  /** 0 = ephemeral. */
  port: number;
}

export interface ServerLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** Reported acceptors (Node accepts on one loop; the family's management default). */
export const ACCEPTORS = 4;
/** Most concurrent HTTP connections per management listener (the family's default). */
export const MAX_CONNS = 512;

export class ManagementServerError extends Error {
  override name = "ManagementServerError";
}

interface Bound {
  bind: ManagementBind;
  server: Server;
  sockets: Set<Socket>;
}

export class ManagementServer {
  private readonly bound: Bound[] = [];

  constructor(
    private readonly app: Hono,
    private readonly binds: readonly ManagementBind[],
    private readonly logger: ServerLogger,
  ) {}

  async start(): Promise<void> {
    try {
      for (const bind of this.binds) await this.listen(bind);
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  private async listen(bind: ManagementBind): Promise<void> {
    const server = createAdaptorServer({ fetch: this.app.fetch }) as Server;
    server.maxConnections = MAX_CONNS;
    const sockets = new Set<Socket>();
    server.on("connection", (s: Socket) => {
      s.on("error", () => {});
      sockets.add(s);
      s.once("close", () => sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error): void =>
        reject(
          new ManagementServerError(`management ${bind.name} cannot listen on ${bind.host}:${bind.port}`, {
            cause: err,
          }),
        );
      server.once("error", onError);
      server.listen({ host: bind.host, port: bind.port }, () => {
        server.off("error", onError);
        resolve();
      });
    });
    server.on("error", (err: Error) => this.logger.warn({ err, listener: bind.name }, "management listener error"));
    this.bound.push({ bind, server, sockets });
    this.logger.info(
      { listener: `http:management:${bind.name}`, host: bind.host, port: portOf(server) },
      "listener started",
    );
  }

  /** Bound port of a listener (tests bind port 0); undefined when it is off. */
  port(name: ManagementListenerName): number | undefined {
    const b = this.bound.find((x) => x.bind.name === name);
    return b === undefined ? undefined : portOf(b.server);
  }

  info(): ListenerRecord[] {
    return this.bound.map((b) => ({
      protocol: "http:management",
      listen_on: listenOn(b.bind.host, portOf(b.server)),
      acceptors: ACCEPTORS,
      max_conns: MAX_CONNS,
      current_conns: b.sockets.size,
      shutdown_count: [],
    }));
  }

  async stop(): Promise<void> {
    const all = this.bound.splice(0);
    await Promise.all(
      all.map(async (b) => {
        const closed = new Promise<void>((resolve) => b.server.close(() => resolve()));
        for (const s of b.sockets) s.destroy();
        await closed;
      }),
    );
  }
}

function portOf(server: Server): number {
  const a = server.address();
  return a !== null && typeof a === "object" ? (a as AddressInfo).port : 0;
}

/** `8081` for a wildcard address, else `<host>:<port>` (as `listen_on` is reported). */
function listenOn(host: string, port: number): string {
  if (host === "0.0.0.0" || host === "::" || host === "") return String(port);
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}
