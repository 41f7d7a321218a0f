// The retained store's topic trie (one node per topic level) and a cursor that walks the messages
// matching a filter one at a time, so that a subscription matching a million retained messages can
// take them in batches, a turn of the event loop each, instead of all in one. The walk is a
// depth-first one, children in insertion order (the order of a recursive walk); it may run while
// the trie changes: a message put after the walk passed its place is not seen, a removed node is
// still walked if the cursor already stood in it.

import type { ChurnMap } from "../broker/churn-map.ts";
import type { Message } from "../broker/types.ts";

export interface TrieNode {
  /**
   * Made with the first child (most nodes are leaves). A ChurnMap: a retained message set and
   * cleared over and over keeps its levels' entries.
   */
  children: ChurnMap<string, TrieNode> | null;
  msg: Message | undefined;
}

export const newNode = (): TrieNode => ({ children: null, msg: undefined });

/** Where a walk of no children stands. */
const NO_CHILDREN: Iterator<[string, TrieNode]> = [][Symbol.iterator]();

const childrenOf = (n: TrieNode): Iterator<[string, TrieNode]> =>
  n.children === null ? NO_CHILDREN : n.children.entries();

/** A node's children still to walk: every message below them (`#`), or the filter's next levels (`+`). */
interface Frame {
  children: Iterator<[string, TrieNode]>;
  all: boolean;
  /** Level of the filter the children stand at (`+` frames). */
  at: number;
  /** `$` topics are not matched by a leading wildcard [MQTT-4.7.2-1]. */
  skipDollar: boolean;
}

export class TrieCursor {
  private readonly levels: string[];
  private readonly stack: Frame[] = [];
  /** A node to walk down from at filter level `at`, before the stack. */
  private node: TrieNode | null;
  private at = 0;

  constructor(root: TrieNode, filter: string) {
    this.levels = filter.split("/");
    this.node = root;
  }

  /** The next matching message; undefined once there is none. */
  next(): Message | undefined {
    for (;;) {
      if (this.node !== null) {
        const m = this.descend(this.node, this.at);
        if (m !== undefined) return m;
        continue;
      }
      const top = this.stack[this.stack.length - 1];
      if (top === undefined) return undefined;
      const r = top.children.next();
      if (r.done === true) {
        this.stack.pop();
        continue;
      }
      const [name, child] = r.value;
      if (top.skipDollar && name.charCodeAt(0) === 0x24) continue;
      if (top.all) {
        if (child.children !== null)
          this.stack.push({ children: child.children.entries(), all: true, at: 0, skipDollar: false });
        if (child.msg !== undefined) return child.msg;
      } else {
        this.node = child;
        this.at = top.at;
      }
    }
  }

  /** Follows the filter's plain levels down from `n`; stops at a wildcard (pushing its frame) or the end. */
  private descend(from: TrieNode, at: number): Message | undefined {
    this.node = null;
    const levels = this.levels;
    let n = from;
    for (let i = at; ; i++) {
      if (i === levels.length) return n.msg;
      const level = levels[i];
      if (level === "#") {
        this.stack.push({ children: childrenOf(n), all: true, at: 0, skipDollar: i === 0 });
        // `a/#` also matches `a` itself [MQTT-4.7.1-2].
        return i > 0 ? n.msg : undefined;
      }
      if (level === "+") {
        this.stack.push({ children: childrenOf(n), all: false, at: i + 1, skipDollar: i === 0 });
        return undefined;
      }
      const c = n.children?.get(level);
      if (c === undefined) return undefined;
      n = c;
    }
  }
}
