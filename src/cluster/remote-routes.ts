// The cluster route table as this node sees it: topic filter -> the OTHER nodes with subscribers,
// kept from a watch on `routes/`. Matching a topic yields each node once, allocation-free (a
// per-node epoch marks who was already visited for the current message).

import { ChurnMap } from "../broker/churn-map.ts";
import { nextRouteVersion } from "../broker/router/router.ts";
import { TopicTrie } from "../broker/router/topic-trie.ts";
import { isWildcard } from "../mqtt/topic.ts";

interface NodeMark {
  node: string;
  epoch: number;
}

export class RemoteRoutes {
  /** A ChurnMap: another node's reply topic comes and goes with every request (churn-map.ts). */
  private readonly byFilter = new ChurnMap<string, Set<NodeMark>>();
  private readonly wild = new TopicTrie<Set<NodeMark>>();
  private readonly marks = new Map<string, NodeMark>();
  private epoch = 0;
  /** Changes whenever a (filter, node) route comes or goes. */
  version = nextRouteVersion();

  constructor(private readonly self: string) {}

  private mark(node: string): NodeMark {
    let m = this.marks.get(node);
    if (m === undefined) {
      m = { node, epoch: 0 };
      this.marks.set(node, m);
    }
    return m;
  }

  add(filter: string, node: string): void {
    if (node === this.self) return;
    let set = this.byFilter.get(filter);
    if (set === undefined) {
      set = new Set();
      this.byFilter.set(filter, set);
      if (isWildcard(filter)) this.wild.set(filter, set);
    }
    const before = set.size;
    set.add(this.mark(node));
    if (set.size !== before) this.version = nextRouteVersion();
  }

  remove(filter: string, node: string): void {
    const set = this.byFilter.get(filter);
    if (set === undefined || !set.delete(this.mark(node))) return;
    this.version = nextRouteVersion();
    if (set.size === 0) {
      this.byFilter.delete(filter);
      if (isWildcard(filter)) this.wild.delete(filter);
    }
  }

  /** Drops every route of `node` (it left or died). */
  removeNode(node: string): void {
    for (const filter of [...this.byFilter.keys()]) this.remove(filter, node);
    for (const [filter, groups] of [...this.sharedByFilter]) {
      for (const g of [...groups.keys()]) this.removeShared(filter, g, node);
    }
  }

  /** Calls `visit` once per node with a filter matching `topic`. */
  match(topic: string, visit: (node: string) => void): void {
    const epoch = ++this.epoch;
    const exact = this.byFilter.get(topic);
    if (exact !== undefined) {
      for (const m of exact) {
        if (m.epoch === epoch) continue;
        m.epoch = epoch;
        visit(m.node);
      }
    }
    if (this.wild.size === 0) return;
    this.wild.match(topic, (set) => {
      for (const m of set) {
        if (m.epoch === epoch) continue;
        m.epoch = epoch;
        visit(m.node);
      }
    });
  }

  // ---- shared-subscription groups of other nodes --------------------------------------------

  private readonly sharedByFilter = new Map<string, Map<string, Set<string>>>();
  private readonly sharedWild = new TopicTrie<Map<string, Set<string>>>();

  addShared(filter: string, group: string, node: string): void {
    if (node === this.self) return;
    let groups = this.sharedByFilter.get(filter);
    if (groups === undefined) {
      groups = new Map();
      this.sharedByFilter.set(filter, groups);
      if (isWildcard(filter)) this.sharedWild.set(filter, groups);
    }
    let nodes = groups.get(group);
    if (nodes === undefined) {
      nodes = new Set();
      groups.set(group, nodes);
    }
    nodes.add(node);
  }

  removeShared(filter: string, group: string, node: string): void {
    const groups = this.sharedByFilter.get(filter);
    const nodes = groups?.get(group);
    if (groups === undefined || nodes === undefined) return;
    nodes.delete(node);
    if (nodes.size === 0) groups.delete(group);
    if (groups.size === 0) {
      this.sharedByFilter.delete(filter);
      if (isWildcard(filter)) this.sharedWild.delete(filter);
    }
  }

  /** Other nodes with members of `group` on `filter` (empty when none). */
  sharedNodes(filter: string, group: string): ReadonlySet<string> | undefined {
    return this.sharedByFilter.get(filter)?.get(group);
  }

  /** Calls `visit` for every (filter, group) of other nodes matching `topic`. */
  matchShared(topic: string, visit: (filter: string, group: string, nodes: ReadonlySet<string>) => void): void {
    if (this.sharedByFilter.size === 0) return;
    const exact = this.sharedByFilter.get(topic);
    if (exact !== undefined) for (const [g, nodes] of exact) visit(topic, g, nodes);
    this.sharedWild.match(topic, (groups, filter) => {
      for (const [g, nodes] of groups) visit(filter, g, nodes);
    });
  }

  /** The nodes with a route for `filter` (the /routes/{topic} views). */
  nodesOf(filter: string): string[] {
    const set = this.byFilter.get(filter);
    return set === undefined ? [] : [...set].map((m) => m.node);
  }

  /** `[filter, node]` pairs (the /routes views). */
  *entries(): Iterable<[string, string]> {
    for (const [filter, set] of this.byFilter) for (const m of set) yield [filter, m.node];
  }

  get size(): number {
    return this.byFilter.size;
  }
}
