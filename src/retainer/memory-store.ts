// Retained messages in memory: topic -> message, plus a topic trie so a wildcard subscription
// finds its retained messages without scanning every topic.

import type { Message } from "../broker/types.ts";
import { isWildcard } from "../mqtt/topic.ts";
import type { RetainedStore } from "./retained-store.ts";

interface Node {
  children: Map<string, Node>;
  msg: Message | undefined;
}

const newNode = (): Node => ({ children: new Map(), msg: undefined });

export class MemoryRetainedStore implements RetainedStore {
  private readonly byTopic = new Map<string, Message>();
  private readonly root = newNode();

  get size(): number {
    return this.byTopic.size;
  }

  put(msg: Message): void {
    this.byTopic.set(msg.topic, msg);
    let n = this.root;
    for (const level of msg.topic.split("/")) {
      let c = n.children.get(level);
      if (c === undefined) {
        c = newNode();
        n.children.set(level, c);
      }
      n = c;
    }
    n.msg = msg;
  }

  delete(topic: string): boolean {
    if (!this.byTopic.delete(topic)) return false;
    const levels = topic.split("/");
    const path: Node[] = [this.root];
    let n = this.root;
    for (const level of levels) {
      const c = n.children.get(level);
      if (c === undefined) return true;
      path.push(c);
      n = c;
    }
    n.msg = undefined;
    for (let i = levels.length; i > 0; i--) {
      const node = path[i];
      if (node.msg !== undefined || node.children.size > 0) break;
      path[i - 1].children.delete(levels[i - 1]);
    }
    return true;
  }

  get(topic: string): Message | undefined {
    return this.byTopic.get(topic);
  }

  match(filter: string): Message[] {
    if (!isWildcard(filter)) {
      const m = this.byTopic.get(filter);
      return m === undefined ? [] : [m];
    }
    const out: Message[] = [];
    this.walk(this.root, filter.split("/"), 0, out);
    return out;
  }

  private walk(n: Node, levels: string[], i: number, out: Message[]): void {
    if (i === levels.length) {
      if (n.msg !== undefined) out.push(n.msg);
      return;
    }
    const level = levels[i];
    if (level === "#") {
      // `a/#` also matches `a` itself [MQTT-4.7.1-2]; a leading wildcard skips `$` topics [MQTT-4.7.2-1].
      if (n.msg !== undefined && i > 0) out.push(n.msg);
      this.collect(n, i === 0, out);
      return;
    }
    if (level === "+") {
      for (const [name, c] of n.children) {
        if (i === 0 && name.startsWith("$")) continue;
        this.walk(c, levels, i + 1, out);
      }
      return;
    }
    const c = n.children.get(level);
    if (c !== undefined) this.walk(c, levels, i + 1, out);
  }

  private collect(n: Node, skipDollar: boolean, out: Message[]): void {
    for (const [name, c] of n.children) {
      if (skipDollar && name.startsWith("$")) continue;
      if (c.msg !== undefined) out.push(c.msg);
      this.collect(c, false, out);
    }
  }

  topics(): string[] {
    return [...this.byTopic.keys()];
  }

  clear(): void {
    this.byTopic.clear();
    this.root.children.clear();
  }

  async close(): Promise<void> {}
}
