// TopicTrie: a level trie of (wildcard) topic filters used by the router to
// find every subscription filter matching a published topic name. The
// router keeps exact (wildcard-free) filters in a Map beside it; the trie
// itself accepts any valid non-shared filter.
//
// Spec references (MQTT 5.0):
//   4.7.1.2  '#' matches the parent level and any number of child levels
//   4.7.1.3  '+' matches exactly one (possibly empty) level
//   4.7.2    Filters starting with '+' or '#' do not match topics
//            starting with '$' [MQTT-4.7.2-1]
//   4.7.3    No normalization of names/filters [MQTT-4.7.3-4]
//
// Filters must be valid (see validateTopicFilter in src/mqtt/topic.ts); a
// '#' level that is not the last level is stored as a literal level.

import { startsWithDollar } from "../../mqtt/topic.ts";
import { ChurnMap } from "../churn-map.ts";

const KIND_LITERAL = 0;
const KIND_PLUS = 1;
const KIND_HASH = 2;

class TrieNode<V> {
  /** Literal child levels, created lazily (a ChurnMap: a client's own level comes and goes). */
  children: ChurnMap<string, TrieNode<V>> | null = null;
  /** '+' child. */
  plus: TrieNode<V> | null = null;
  /** '#' child (always a leaf holding a value). */
  hash: TrieNode<V> | null = null;
  /** A filter ends at this node. */
  has = false;
  value: V | undefined = undefined;
  /** The full filter ending here (valid when `has`). */
  filter = "";
  readonly parent: TrieNode<V> | null;
  /** Level text in the parent (for literal children). */
  readonly key: string;
  readonly kind: number;

  constructor(parent: TrieNode<V> | null, key: string, kind: number) {
    this.parent = parent;
    this.key = key;
    this.kind = kind;
  }

  isEmpty(): boolean {
    return !this.has && this.children === null && this.plus === null && this.hash === null;
  }
}

export class TopicTrie<V> {
  private readonly root = new TrieNode<V>(null, "", KIND_LITERAL);
  private count = 0;

  /** Number of stored filters. */
  get size(): number {
    return this.count;
  }

  /** Stores `value` under `filter`, replacing any previous value. */
  set(filter: string, value: V): void {
    const levels = filter.split("/");
    const last = levels.length - 1;
    let node = this.root;
    for (let i = 0; i <= last; i++) {
      const level = levels[i];
      if (level === "+") {
        let next = node.plus;
        if (next === null) node.plus = next = new TrieNode<V>(node, level, KIND_PLUS);
        node = next;
      } else if (level === "#" && i === last) {
        let next = node.hash;
        if (next === null) node.hash = next = new TrieNode<V>(node, level, KIND_HASH);
        node = next;
      } else {
        let children = node.children;
        if (children === null) node.children = children = new ChurnMap();
        let next = children.get(level);
        if (next === undefined) {
          next = new TrieNode<V>(node, level, KIND_LITERAL);
          children.set(level, next);
        }
        node = next;
      }
    }
    if (!node.has) {
      node.has = true;
      node.filter = filter;
      this.count++;
    }
    node.value = value;
  }

  get(filter: string): V | undefined {
    const node = this.find(filter);
    return node?.has ? node.value : undefined;
  }

  has(filter: string): boolean {
    const node = this.find(filter);
    return node?.has === true;
  }

  /** Removes `filter`; prunes nodes left empty. Returns false if absent. */
  delete(filter: string): boolean {
    let node = this.find(filter);
    if (node === null || !node.has) return false;
    node.has = false;
    node.value = undefined;
    node.filter = "";
    this.count--;
    // Prune upwards while nodes are empty.
    while (node !== null && node.parent !== null && node.isEmpty()) {
      const parent: TrieNode<V> = node.parent;
      if (node.kind === KIND_PLUS) parent.plus = null;
      else if (node.kind === KIND_HASH) parent.hash = null;
      else {
        const children = parent.children;
        if (children !== null) {
          children.delete(node.key);
          if (children.size === 0) parent.children = null;
        }
      }
      node = parent;
    }
    return true;
  }

  clear(): void {
    const r = this.root;
    r.children = null;
    r.plus = null;
    r.hash = null;
    r.has = false;
    r.value = undefined;
    r.filter = "";
    this.count = 0;
  }

  /**
   * Calls `visit(value, filter)` once for every stored filter matching the
   * topic name `topic`. Filters beginning with '+' or '#' are skipped for
   * topics beginning with '$' [MQTT-4.7.2-1]. The trie must not be modified
   * from inside `visit`.
   */
  match(topic: string, visit: (value: V, filter: string) => void): void {
    if (this.count === 0) return;
    const levels = topic.split("/");
    const dollar = startsWithDollar(topic);
    this.walk(this.root, levels, 0, dollar, visit);
  }

  /** Number of nodes (for tests / diagnostics; O(nodes)). */
  nodeCount(): number {
    return countNodes(this.root);
  }

  private walk(
    node: TrieNode<V>,
    levels: string[],
    i: number,
    noWild: boolean,
    visit: (value: V, filter: string) => void,
  ): void {
    // '#' matches the parent level and everything below it (4.7.1.2).
    const h = node.hash;
    if (h !== null && !noWild) visit(h.value as V, h.filter); // [MQTT-4.7.2-1]
    if (i === levels.length) {
      if (node.has) visit(node.value as V, node.filter);
      return;
    }
    const children = node.children;
    if (children !== null) {
      const child = children.get(levels[i]);
      if (child !== undefined) this.walk(child, levels, i + 1, false, visit);
    }
    const p = node.plus;
    if (p !== null && !noWild) this.walk(p, levels, i + 1, false, visit); // [MQTT-4.7.2-1]
  }

  private find(filter: string): TrieNode<V> | null {
    let node: TrieNode<V> | null = this.root;
    let start = 0;
    const n = filter.length;
    for (;;) {
      let end = filter.indexOf("/", start);
      if (end === -1) end = n;
      const isLast = end === n;
      const len = end - start;
      const c = len === 1 ? filter.charCodeAt(start) : 0;
      if (c === 0x2b /* + */) node = node.plus;
      else if (c === 0x23 /* # */ && isLast) node = node.hash;
      else {
        const children: ChurnMap<string, TrieNode<V>> | null = node.children;
        if (children === null) return null;
        node = children.get(filter.slice(start, end)) ?? null;
      }
      if (node === null || isLast) return node;
      start = end + 1;
    }
  }
}

function countNodes<V>(node: TrieNode<V>): number {
  let n = 1;
  if (node.children !== null) for (const c of node.children.values()) n += countNodes(c);
  if (node.plus !== null) n += countNodes(node.plus);
  if (node.hash !== null) n += countNodes(node.hash);
  return n;
}
