// A small HTTP server inside the tests (node:http on 127.0.0.1:0): the auth service of
// svc_auth_http and the JWKS server of svc_auth_jwt. Each request is recorded with its parameters
// (query, form or JSON body); `handle` answers it. It can be stopped and started again on the same
// port (a back end going down and coming back), or made to hang (never answer).

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface SeenRequest {
  method: string;
  path: string;
  contentType: string | undefined;
  params: Record<string, string>;
}

export type Answer = { status: number; body?: string; type?: string } | "hang";

export class TestHttpServer {
  readonly seen: SeenRequest[] = [];
  handle: (r: SeenRequest) => Answer = () => ({ status: 404 });
  private server: Server | undefined;
  private hanging: ServerResponse[] = [];
  port = 0;

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => void this.onRequest(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (s === undefined) return;
    for (const r of this.hanging) r.destroy();
    this.hanging = [];
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const url = new URL(req.url ?? "/", "http://x");
    const contentType = req.headers["content-type"];
    let params: Record<string, string> = Object.fromEntries(url.searchParams);
    if (text !== "") {
      params = contentType === "application/json" ? JSON.parse(text) : Object.fromEntries(new URLSearchParams(text));
    }
    const seen: SeenRequest = { method: req.method ?? "", path: url.pathname, contentType, params };
    this.seen.push(seen);
    const a = this.handle(seen);
    if (a === "hang") {
      this.hanging.push(res);
      return;
    }
    res.writeHead(a.status, { "content-type": a.type ?? "text/plain" });
    res.end(a.body ?? "");
  }
}
