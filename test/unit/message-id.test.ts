import { describe, expect, it } from "vitest";
import { type Message, makeMessage, messageId } from "../../src/broker/types.ts";

const withSeq = (seq: number): Message => ({
  ...makeMessage({ topic: "t", payload: Buffer.alloc(0), qos: 0, retain: false }),
  seq,
});

describe("messageId", () => {
  it("is a fixed prefix followed by the sequence number in hex (eight digits below 2^32)", () => {
    const prefix = messageId(withSeq(0)).slice(0, -8);
    for (const seq of [0, 1, 255, 256, 257, 0xffff, 0x10000, 0x12345678, 0xffffffff]) {
      expect(messageId(withSeq(seq))).toBe(prefix + seq.toString(16).padStart(8, "0"));
    }
    expect(messageId(withSeq(2 ** 40 + 5))).toBe(prefix + (2 ** 40 + 5).toString(16));
  });

  it("gives the same answer whatever order the ids are asked in", () => {
    const seqs = [300, 5, 301, 70000, 6, 299, 70001, 4];
    const first = seqs.map((s) => messageId(withSeq(s)));
    const again = [...seqs]
      .reverse()
      .map((s) => messageId(withSeq(s)))
      .reverse();
    expect(again).toEqual(first);
    expect(new Set(first).size).toBe(seqs.length);
  });
});
