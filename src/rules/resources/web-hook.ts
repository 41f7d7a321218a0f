// Resource type `web_hook` (emqx-facts §2, 4.3+ config with the 4.0-4.2 `headers` and `method`):
// a keep-alive HTTP(S) connection pool (node:http/https Agent, `pool_size` sockets) to `url`,
// with connect and request timeouts and the TLS options. The health check opens a TCP (TLS)
// connection to the URL's host and port within `connect_timeout`.

import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import tls from "node:tls";
import { parseDuration } from "../../config/values.ts";
import { optionalParam, type ParamSpec } from "../engine/records.ts";
import type { ResourceInstance, ResourceTypeDef } from "./types.ts";

const p = optionalParam;

export const WEB_HOOK_PARAMS: Record<string, ParamSpec> = {
  url: p("string", "Request URL", "The URL of the server that will receive the Webhook requests", {
    required: true,
    format: "url",
    order: 1,
  }),
  headers: p("object", "Request Header", "The custom HTTP request headers", { default: {}, order: 2 }),
  method: p("string", "Request Method", "The HTTP method of the requests", {
    enum: ["POST", "PUT", "GET", "DELETE"],
    default: "POST",
    order: 3,
  }),
  connect_timeout: p("string", "Connect Timeout", "Connect timeout duration", { default: "5s", order: 4 }),
  request_timeout: p("string", "Request Timeout", "Request timeout duration", { default: "5s", order: 5 }),
  pool_size: p("number", "Pool Size", "Connection process pool size", { default: 8, order: 6 }),
  enable_pipelining: p("boolean", "Enable Pipelining", "Whether to enable HTTP Pipelining", {
    default: true,
    order: 7,
  }),
  cacertfile: p("string", "CA Certificate File", "The CA certificate file path", { default: "", order: 8 }),
  keyfile: p("string", "SSL Key", "The private key file path", { default: "", order: 9 }),
  certfile: p("string", "SSL Cert", "The certificate file path", { default: "", order: 10 }),
  verify: p("boolean", "Verify Server Certfile", "Whether to verify the server certificate", {
    default: false,
    order: 11,
  }),
  server_name_indication: p("string", "Server Name Indication", "TLS SNI; empty: the URL's host", {
    default: "",
    order: 12,
  }),
};

export interface WebHookConfig {
  url: URL;
  headers: Record<string, string>;
  method: string;
  connectTimeout: number;
  requestTimeout: number;
  poolSize: number;
  tls: tls.ConnectionOptions;
}

function ms(v: unknown, dflt: number): number {
  if (typeof v === "number") return v;
  if (typeof v !== "string" || v === "") return dflt;
  const r = parseDuration(v, "ms");
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

function file(v: unknown): Buffer | undefined {
  return typeof v === "string" && v !== "" ? readFileSync(v) : undefined;
}

/** Parses a stored config (throws on a bad one). */
export function webHookConfig(c: Record<string, unknown>): WebHookConfig {
  const url = new URL(String(c.url));
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`unsupported scheme ${url.protocol}`);
  const headers: Record<string, string> = {};
  if (typeof c.headers === "object" && c.headers !== null)
    for (const [k, v] of Object.entries(c.headers)) headers[k.toLowerCase()] = String(v);
  const sni = typeof c.server_name_indication === "string" ? c.server_name_indication : "";
  return {
    url,
    headers,
    method: typeof c.method === "string" ? c.method.toUpperCase() : "POST",
    connectTimeout: ms(c.connect_timeout, 5000),
    requestTimeout: ms(c.request_timeout, 5000),
    poolSize: typeof c.pool_size === "number" && c.pool_size > 0 ? Math.floor(c.pool_size) : 8,
    tls: {
      ca: file(c.cacertfile),
      key: file(c.keyfile),
      cert: file(c.certfile),
      rejectUnauthorized: c.verify === true,
      servername: sni !== "" ? sni : url.hostname,
    },
  };
}

export interface WebRequest {
  method: string;
  /** Appended to the resource URL's path. */
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** A running web_hook resource: the connection pool and its requests. */
export class WebHookResource implements ResourceInstance {
  readonly type = "web_hook";
  readonly cfg: WebHookConfig;
  private readonly agent: http.Agent;

  constructor(
    readonly id: string,
    config: Record<string, unknown>,
  ) {
    this.cfg = webHookConfig(config);
    const opts = { keepAlive: true, maxSockets: this.cfg.poolSize, maxFreeSockets: this.cfg.poolSize };
    this.agent = this.secure ? new https.Agent({ ...opts, ...this.cfg.tls }) : new http.Agent(opts);
  }

  private get secure(): boolean {
    return this.cfg.url.protocol === "https:";
  }

  private get port(): number {
    return this.cfg.url.port !== "" ? Number(this.cfg.url.port) : this.secure ? 443 : 80;
  }

  /** Sends one request; resolves with the status (2xx), rejects otherwise. */
  request(r: WebRequest): Promise<number> {
    const u = this.cfg.url;
    const base = u.pathname.endsWith("/") && r.path.startsWith("/") ? u.pathname.slice(0, -1) : u.pathname;
    const path = `${base}${r.path}${u.search}`;
    const body = r.method === "GET" || r.method === "DELETE" ? "" : r.body;
    const headers: Record<string, string | number> = { ...this.cfg.headers, ...r.headers };
    if (body !== "") headers["content-length"] = Buffer.byteLength(body);
    const mod = this.secure ? https : http;
    return new Promise<number>((resolve, reject) => {
      const req = mod.request(
        {
          agent: this.agent,
          host: u.hostname,
          port: this.port,
          method: r.method,
          path,
          headers,
          timeout: this.cfg.requestTimeout,
        },
        (res) => {
          res.resume();
          res.on("end", () => {
            const s = res.statusCode ?? 0;
            if (s >= 200 && s < 300) resolve(s);
            else reject(new Error(`HTTP ${s}`));
          });
          res.on("error", reject);
        },
      );
      const connectTimer = setTimeout(() => req.destroy(new Error("connect timeout")), this.cfg.connectTimeout);
      req.on("socket", (s) => {
        if (!s.connecting) clearTimeout(connectTimer);
        else s.once(this.secure ? "secureConnect" : "connect", () => clearTimeout(connectTimer));
      });
      req.on("timeout", () => req.destroy(new Error("request timeout")));
      req.on("error", (e) => {
        clearTimeout(connectTimer);
        reject(e);
      });
      req.on("close", () => clearTimeout(connectTimer));
      req.end(body === "" ? undefined : body);
    });
  }

  healthCheck(): Promise<boolean> {
    return new Promise((resolve) => {
      const host = this.cfg.url.hostname;
      const s = this.secure
        ? tls.connect({ host, port: this.port, ...this.cfg.tls })
        : net.connect({ host, port: this.port });
      const done = (ok: boolean) => {
        clearTimeout(t);
        s.destroy();
        resolve(ok);
      };
      const t = setTimeout(() => done(false), this.cfg.connectTimeout);
      s.once(this.secure ? "secureConnect" : "connect", () => done(true));
      s.once("error", () => done(false));
    });
  }

  async stop(): Promise<void> {
    this.agent.destroy();
  }
}

export const webHookType: ResourceTypeDef = {
  name: "web_hook",
  provider: "svc_web_hook",
  title: "WebHook",
  description: "WebHook",
  params: WEB_HOOK_PARAMS,
  validate(config) {
    try {
      webHookConfig({ ...config, cacertfile: "", keyfile: "", certfile: "" });
      return null;
    } catch (e) {
      return `Invalid web_hook config: ${(e as Error).message}`;
    }
  },
  create: (id, config) => new WebHookResource(id, config),
};
