// Where retained messages live. One interface, two implementations: memory (`ram`) and memory
// backed by an append-only log in the data dir (`disc`), so retained messages survive a restart.

import type { Message } from "../broker/types.ts";
import type { TrieCursor } from "./topic-trie.ts";

export interface RetainedStore {
  put(msg: Message): void;
  delete(topic: string): boolean;
  get(topic: string): Message | undefined;
  /** Every retained message whose topic matches `filter`. */
  match(filter: string): Message[];
  /** The same messages, one at a time (a walk that may span turns of the event loop). */
  cursor(filter: string): TrieCursor;
  topics(): string[];
  readonly size: number;
  clear(): void;
  close(): Promise<void>;
}
