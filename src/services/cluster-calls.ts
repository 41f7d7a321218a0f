// The seam through which the service layer answers for the whole cluster without knowing the
// cluster code: the running nodes, and calls to a view's handler on one of them. Each service
// registers one handler per view (`mgmt.clients`, `mgmt.kick`, ...) on its own node at
// construction; a cluster-wide view calls it on every running node, a node-scoped one on that
// node. main.ts implements it over the inter-node link when the node is clustered; LocalCalls is
// the single node's (and the base of the clustered one: a call to this node never leaves the
// process). Arguments and results must be JSON-able (they cross the link as JSON); a handler
// answers null, never undefined, for "nothing".

/** A view's handler; `from` is the calling node. */
export type ViewHandler = (args: unknown, from: string) => unknown;

export interface ClusterCalls {
  /** This node's name. */
  readonly self: string;
  /** Running nodes, this one included, sorted by name. */
  nodes(): string[];
  /** Runs `method`'s handler on `node`; rejects with NodeCallError (unknown, down, timed out, failed). */
  call<T>(node: string, method: string, args: unknown): Promise<T>;
  /** Registers this node's handler of `method` (one per method). */
  register(method: string, handler: ViewHandler): void;
}

/** A call to a node did not answer (the API's 5xx `badrpc`, code 101). */
export class NodeCallError extends Error {
  override readonly name = "NodeCallError";

  constructor(
    readonly node: string,
    readonly method: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`call ${method} to ${node} failed: ${reason}`, options);
  }
}

/** The single node's ClusterCalls: itself is the only node; handlers run in-process. */
export class LocalCalls implements ClusterCalls {
  private readonly handlers = new Map<string, ViewHandler>();

  constructor(readonly self: string) {}

  nodes(): string[] {
    return [this.self];
  }

  call<T>(node: string, method: string, args: unknown): Promise<T> {
    if (node !== this.self) return Promise.reject(new NodeCallError(node, method, "not a running node"));
    return this.callLocal<T>(method, args);
  }

  register(method: string, handler: ViewHandler): void {
    if (this.handlers.has(method)) throw new Error(`cluster call ${method} registered twice`);
    this.handlers.set(method, handler);
  }

  /** Runs this node's handler (as a remote call would: undefined answers null, throws reject). */
  protected async callLocal<T>(method: string, args: unknown, from = this.self): Promise<T> {
    const h = this.handlers.get(method);
    if (h === undefined) throw new NodeCallError(this.self, method, "no such handler");
    const out = await h(args, from);
    return (out === undefined ? null : out) as T;
  }

  /** The registered handler of `method` (the clustered implementation serves the link with it). */
  protected handler(method: string): ViewHandler | undefined {
    return this.handlers.get(method);
  }
}

/** `{count, rows}` of one node's filtered list: the rows of its items `from` (default 0) on. */
export interface PagePart<T> {
  count: number;
  rows: T[];
  from?: number;
}

/** A page window: `start` rows skipped, at most `limit` rows. */
export interface Window {
  start: number;
  limit: number;
}

/** A page of a list spread over nodes, with the total count. */
export interface PageOf<T> {
  rows: T[];
  count: number;
}

/**
 * Cuts one node's list for a window: how many items `items` yields, and rows made by `row` for
 * those of its first `start + limit` items only (a page of 20 of 100,000 clients builds 20 rows
 * where `exact`, at most `start + limit` otherwise). `exact`: the node's items come first in the
 * concatenation, so the window's own items are the ones needed.
 */
export function partOf<S, T>(items: Iterable<S>, w: Window, row: (item: S) => T, exact = false): PagePart<T> {
  const from = exact ? w.start : 0;
  const end = w.start + w.limit;
  const rows: T[] = [];
  let count = 0;
  for (const item of items) {
    if (count >= from && count < end) rows.push(row(item));
    count++;
  }
  return from === 0 ? { count, rows } : { count, rows, from };
}

/** What a node's page handler gets: the query, the window, and whether its part is first. */
export interface PageArgs<Q> {
  q: Q;
  w: Window;
  exact: boolean;
}

/**
 * A page of a view spread over nodes, through each node's `method` handler (PageArgs): on `node`
 * only (its failure rejects), or over every running node (one that fails is left out). The first
 * node's part starts the concatenation, so it cuts its rows to the window itself.
 */
export async function pageFrom<Q, T>(
  calls: ClusterCalls,
  method: string,
  q: Q,
  w: Window,
  node?: string,
): Promise<PageOf<T>> {
  const args = (exact: boolean): PageArgs<Q> => ({ q, w, exact });
  if (node !== undefined) return pageAcross([await calls.call<PagePart<T>>(node, method, args(true))], w);
  const nodes = calls.nodes();
  const settled = await Promise.allSettled(nodes.map((n, i) => calls.call<PagePart<T>>(n, method, args(i === 0))));
  const parts: PagePart<T>[] = [];
  // A node that failed is left out; when it was the first, the next one's part (not cut) still fits.
  for (const r of settled) if (r.status === "fulfilled") parts.push(r.value);
  return pageAcross(parts, w);
}

/**
 * The window of the concatenation of per-node lists (in the given order, each node's rows in its
 * own order), when each part holds its node's first `start + limit` rows: a row at a global index
 * below `start + limit` is always among them, so the page is exact.
 */
export function pageAcross<T>(parts: readonly PagePart<T>[], w: Window): PageOf<T> {
  const rows: T[] = [];
  let offset = 0;
  let count = 0;
  const end = w.start + w.limit;
  for (const p of parts) {
    count += p.count;
    if (rows.length < w.limit && offset + p.count > w.start && offset < end) {
      const base = p.from ?? 0;
      const from = Math.max(base, w.start - offset);
      const to = Math.min(p.count, end - offset, base + p.rows.length);
      for (let i = from; i < to; i++) rows.push(p.rows[i - base]);
    }
    offset += p.count;
  }
  return { rows, count };
}

/**
 * Calls `method` on every running node (in name order) and keeps the answers of the nodes that
 * answered: a node that is down or too slow is left out of a cluster-wide view.
 */
export async function fromEvery<T>(
  calls: ClusterCalls,
  method: string,
  args: unknown,
): Promise<{ node: string; value: T }[]> {
  const nodes = calls.nodes();
  const settled = await Promise.allSettled(nodes.map((n) => calls.call<T>(n, method, args)));
  const out: { node: string; value: T }[] = [];
  settled.forEach((s, i) => {
    if (s.status === "fulfilled") out.push({ node: nodes[i], value: s.value });
  });
  return out;
}
