// A small typed client of the management API for svc_ctl: v4 routes with HTTP Basic (an
// application's AppID/AppSecret), JSON in and out, the `{code, data, meta}` envelope unwrapped.
// The route table registers routes imperatively, so the app's type does not carry them and Hono's
// `hc` cannot be typed from it; the shapes svc_ctl reads are declared in api-types.ts.

import { CliError, NotFoundError } from "./errors.ts";

export interface Endpoint {
  host: string;
  port: number;
  user: string;
  password: string;
}

interface Envelope<T> {
  code?: number;
  data?: T;
  message?: string;
  meta?: { page: number; limit: number; count: number };
}

const TIMEOUT_MS = 15_000;

export class ApiClient {
  private readonly base: string;
  private readonly auth: string;

  constructor(readonly endpoint: Endpoint) {
    const host = endpoint.host.includes(":") ? `[${endpoint.host}]` : endpoint.host;
    this.base = `http://${host}:${endpoint.port}`;
    this.auth = `Basic ${Buffer.from(`${endpoint.user}:${endpoint.password}`).toString("base64")}`;
  }

  get<T>(path: string): Promise<T> {
    return this.call<T>("GET", path);
  }

  post<T>(path: string, body: unknown = {}): Promise<T> {
    return this.call<T>("POST", path, body);
  }

  put<T>(path: string, body: unknown = {}): Promise<T> {
    return this.call<T>("PUT", path, body);
  }

  delete<T>(path: string): Promise<T> {
    return this.call<T>("DELETE", path);
  }

  /** Every row of a paginated list, page after page. */
  async getAll<T>(path: string): Promise<T[]> {
    const rows: T[] = [];
    const sep = path.includes("?") ? "&" : "?";
    for (let page = 1; ; page++) {
      const env = await this.envelope<T[]>("GET", `${path}${sep}_page=${page}`);
      const data = env.data ?? [];
      rows.push(...data);
      if (env.meta === undefined || data.length === 0 || rows.length >= env.meta.count) return rows;
    }
  }

  /** `GET /status` (no authentication): the probe's text and whether the node runs. */
  async status(): Promise<{ running: boolean; text: string }> {
    const res = await this.fetch("GET", "/status");
    return { running: res.ok, text: (await res.text()).trim() };
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return (await this.envelope<T>(method, path, body)).data as T;
  }

  private async envelope<T>(method: string, path: string, body?: unknown): Promise<Envelope<T>> {
    const res = await this.fetch(method, `/api/v4${path}`, body);
    const text = await res.text();
    let json: Envelope<T> = {};
    try {
      json = text === "" ? {} : (JSON.parse(text) as Envelope<T>);
    } catch {
      if (res.ok) throw new CliError(`the management API answered ${method} ${path} with something other than JSON`);
    }
    if (res.status === 404) throw new NotFoundError(json.message ?? "");
    if (res.status === 401)
      throw new CliError(`authentication failed: ${json.message ?? "401"} (check --user/--password)`);
    if (!res.ok) throw new CliError(json.message ?? `HTTP ${res.status}`);
    return json;
  }

  private async fetch(method: string, path: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = { authorization: this.auth };
    if (body !== undefined) headers["content-type"] = "application/json";
    try {
      return await fetch(`${this.base}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
      throw new CliError(`Node is not running or unreachable: ${this.base} (${reason(err)})`);
    }
  }
}

function reason(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause as { code?: string; message?: string } | undefined;
  return cause?.code ?? cause?.message ?? err.message;
}

/** A path segment, URL-encoded (client ids, topics, names). */
export const seg = (s: string): string => encodeURIComponent(s);
