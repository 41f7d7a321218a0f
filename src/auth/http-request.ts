// Helpers of svc_auth_http (emqx-facts §5 auth_http): the request parameters with their
// placeholders, the request itself (GET query or POST form / JSON body) with Node's fetch, and a
// bounded pool of requests in flight whose deadline covers the wait for a slot as well.
//
// Placeholders (anywhere in a parameter's value): %u user name, %c client id, %a peer address,
// %r protocol (`mqtt`), %P password, %p the listener's port, %C certificate CN, %d certificate DN,
// %A access (1 subscribe, 2 publish), %t topic, %m mountpoint. A value the client does not have is
// the empty string.

import type { AclAction } from "../broker/hookpoints.ts";
import type { ClientInfo } from "../broker/types.ts";

export type HttpMethod = "get" | "post";
export type HttpContentType = "application/x-www-form-urlencoded" | "application/json";

export interface HttpRequestSpec {
  url: string;
  method: HttpMethod;
  contentType: HttpContentType;
  /** `name=value` pairs, values with placeholders. */
  params: [string, string][];
}

/** What the placeholders are filled from. */
export interface PlaceholderVars {
  client: ClientInfo;
  password?: Buffer | undefined;
  access?: AclAction;
  topic?: string;
}

/** Parses `clientid=%c,username=%u,password=%P` into pairs; throws on an entry without `=`. */
export function parseParams(text: string): [string, string][] {
  const out: [string, string][] = [];
  for (const part of text.split(",")) {
    const p = part.trim();
    if (p === "") continue;
    const eq = p.indexOf("=");
    if (eq <= 0) throw new Error(`invalid parameter "${p}" (expected name=value)`);
    out.push([p.slice(0, eq).trim(), p.slice(eq + 1).trim()]);
  }
  return out;
}

/** The value of each placeholder for `v`. */
function varOf(ch: string, v: PlaceholderVars): string {
  const c = v.client;
  switch (ch) {
    case "u":
      return c.username ?? "";
    case "c":
      return c.clientId;
    case "a":
      return c.peerHost;
    case "r":
      return "mqtt";
    case "P":
      return v.password?.toString("utf8") ?? "";
    case "p":
      return String(c.sockPort);
    case "C":
      return c.peerCert?.cn ?? "";
    case "d":
      return c.peerCert?.dn ?? "";
    case "A":
      return v.access === undefined ? "" : v.access === "subscribe" ? "1" : "2";
    case "t":
      return v.topic ?? "";
    case "m":
      return c.mountpoint ?? "";
    default:
      return `%${ch}`;
  }
}

/** `value` with every placeholder filled in. */
export function feedPlaceholders(value: string, v: PlaceholderVars): string {
  return value.replace(/%[ucarPpCdAtm]/g, (m) => varOf(m[1], v));
}

/** The URL and fetch options of one request. */
export function buildRequest(spec: HttpRequestSpec, v: PlaceholderVars): { url: string; init: RequestInit } {
  const pairs = spec.params.map(([k, val]): [string, string] => [k, feedPlaceholders(val, v)]);
  if (spec.method === "get") {
    const u = new URL(spec.url);
    for (const [k, val] of pairs) u.searchParams.append(k, val);
    return { url: u.toString(), init: { method: "GET" } };
  }
  const body =
    spec.contentType === "application/json"
      ? JSON.stringify(Object.fromEntries(pairs))
      : new URLSearchParams(pairs).toString();
  return { url: spec.url, init: { method: "POST", headers: { "content-type": spec.contentType }, body } };
}

/** An HTTP answer: its status and (trimmed) body. */
export interface HttpAnswer {
  status: number;
  body: string;
}

/**
 * At most `size` requests in flight; the others wait for a slot. Each request's `timeout` counts
 * from the call (the wait for a slot included), so nothing waits longer than that.
 */
export class RequestPool {
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly size: number,
    private readonly timeout: number,
  ) {}

  get active(): number {
    return this.inFlight;
  }

  async request(url: string, init: RequestInit): Promise<HttpAnswer> {
    const signal = AbortSignal.timeout(this.timeout);
    await this.acquire(signal);
    try {
      const res = await fetch(url, { ...init, signal, redirect: "manual" });
      const body = (await res.text()).trim();
      return { status: res.status, body };
    } finally {
      this.release();
    }
  }

  private acquire(signal: AbortSignal): Promise<void> {
    if (this.inFlight < this.size) {
      this.inFlight++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const go = () => {
        signal.removeEventListener("abort", onAbort);
        this.inFlight++;
        resolve();
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(go);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(go);
    });
  }

  private release(): void {
    this.inFlight--;
    this.waiting.shift()?.();
  }
}
