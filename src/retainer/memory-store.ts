// Retained messages in memory: topic -> message, plus a topic trie (topic-trie.ts) so a wildcard
// subscription finds its retained messages without scanning every topic.

import { ChurnMap } from "../broker/churn-map.ts";
import type { Message } from "../broker/types.ts";
import type { RetainedStore } from "./retained-store.ts";
import { newNode, TrieCursor, type TrieNode } from "./topic-trie.ts";

export class MemoryRetainedStore implements RetainedStore {
  /** A ChurnMap: a topic whose retained message is set and cleared over and over (churn-map.ts). */
  private readonly byTopic = new ChurnMap<string, Message>();
  private readonly root = newNode();

  get size(): number {
    return this.byTopic.size;
  }

  put(msg: Message): void {
    this.byTopic.set(msg.topic, msg);
    let n = this.root;
    for (const level of msg.topic.split("/")) {
      let children = n.children;
      if (children === null) n.children = children = new ChurnMap();
      let c = children.get(level);
      if (c === undefined) {
        c = newNode();
        children.set(level, c);
      }
      n = c;
    }
    n.msg = msg;
  }

  delete(topic: string): boolean {
    if (!this.byTopic.delete(topic)) return false;
    const levels = topic.split("/");
    const path: TrieNode[] = [this.root];
    let n = this.root;
    for (const level of levels) {
      const c = n.children?.get(level);
      if (c === undefined) return true;
      path.push(c);
      n = c;
    }
    n.msg = undefined;
    for (let i = levels.length; i > 0; i--) {
      const node = path[i];
      if (node.msg !== undefined || (node.children !== null && node.children.size > 0)) break;
      path[i - 1].children?.delete(levels[i - 1]);
    }
    return true;
  }

  get(topic: string): Message | undefined {
    return this.byTopic.get(topic);
  }

  match(filter: string): Message[] {
    const out: Message[] = [];
    const c = this.cursor(filter);
    for (let m = c.next(); m !== undefined; m = c.next()) out.push(m);
    return out;
  }

  cursor(filter: string): TrieCursor {
    return new TrieCursor(this.root, filter);
  }

  topics(): string[] {
    return [...this.byTopic.keys()];
  }

  clear(): void {
    this.byTopic.clear();
    this.root.children?.clear(); // a walk under way ends here, as it did
    this.root.children = null;
  }

  async close(): Promise<void> {}
}
