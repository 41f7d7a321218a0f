// The inter-node wire protocol (version 1): typed, versioned frames over one TCP (or TLS)
// connection per pair of nodes. This header is the reference for the format.
//
// Frame:   u32 length (big-endian, bytes after this field) | u8 kind | body
//          Before authentication a frame may not exceed 4 KiB; after, MAX_FRAME (257 MiB).
//
// Handshake (dialer D connects to acceptor A; nothing else is accepted before it completes):
//   D -> A  HELLO     0x01  "SVCL" | u16 version | nonce_D (32 bytes) | str D's node name
//   A -> D  CHALLENGE 0x02  u16 version | nonce_A (32) | str A's node name | mac_A (32)
//   D -> A  AUTH      0x03  mac_D (32)
//   A -> D  WELCOME   0x04  (empty): the link is up, both sides may send anything below
//   either  REFUSE    0x05  u8 code | str detail, then the sender closes. Codes: 1 version_mismatch,
//                           2 cookie_mismatch, 3 node_mismatch, 4 duplicate (another connection
//                           of the pair wins; retry later), 5 protocol_error.
//   mac_X = HMAC-SHA256(key = cookie (UTF-8), "svc-link" | u8 role (1 acceptor, 2 dialer) |
//           u16 version | str D | str A | nonce_D | nonce_A). Each side proves the cookie over
//   both fresh nonces and both names without sending it; the proofs differ by role so one cannot
//   be reflected as the other. A checks the version of HELLO first (REFUSE 1), D checks mac_A
//   (REFUSE 2), the expected node name (REFUSE 3), A checks mac_D (REFUSE 2), then whether this
//   connection is the pair's one (REFUSE 4). HELLO keeps magic and version first in every version.
//
// After WELCOME:
//   FORWARD   0x10  u32 count | count x message (below); one frame per tick or per 64 KiB
//   CALL      0x11  u32 id | str method | JSON args (UTF-8, rest of the frame)
//   REPLY     0x12  u32 id | u8 status (0 ok, 1 error) | JSON (rest): the value, or
//                   {"message": string, "code"?: string} for an error
//   PING      0x13  (empty), every ping interval; answered by
//   PONG      0x14  (empty). A connection silent for the dead-peer timeout is closed.
//
// Message (in FORWARD):
//   u8 flags: bits 0-1 QoS, 0x04 retain, 0x08 sys, 0x10 username present, 0x20 properties
//             present, 0x40 headers present, 0x80 expiresAt present (absent = 0)
//   str topic | str from | [str username] | str peerhost | f64 timestamp | [f64 expiresAt]
//   bytes payload | [properties] | [str headers as JSON]
//   properties: u8 flags (0x01 payloadFormatIndicator present, 0x02 its value, 0x04 message
//     expiry interval, 0x08 content type, 0x10 response topic, 0x20 correlation data, 0x40 user
//     properties) | [varint expiry] | [str content type] | [str response topic]
//     | [bytes correlation data] | [varint n | n x (str key | u8 0 str value | u8 1 varint m m x str)]
// Encodings: varint = unsigned LEB128; str = varint byte length + UTF-8; bytes = varint length +
// bytes; f64 = IEEE 754 big-endian; u16/u32 big-endian.

import { type BufReader, BufWriter, WireError } from "./wire.ts";

export const PROTOCOL_VERSION = 1;
export const MAGIC = Buffer.from("SVCL", "latin1");
export const NONCE_BYTES = 32;
export const MAC_BYTES = 32;
/** Frame limit before authentication. */
export const MAX_HANDSHAKE_FRAME = 4096;
/** Frame limit after: an MQTT packet's largest payload (256 MiB) plus room for its metadata. */
export const MAX_FRAME = 257 * 1024 * 1024;
/** A FORWARD frame is closed once its body reaches this size. */
export const BATCH_BYTES = 64 * 1024;

export const Kind = {
  hello: 0x01,
  challenge: 0x02,
  auth: 0x03,
  welcome: 0x04,
  refuse: 0x05,
  forward: 0x10,
  call: 0x11,
  reply: 0x12,
  ping: 0x13,
  pong: 0x14,
} as const;
export type Kind = (typeof Kind)[keyof typeof Kind];

export const RefuseCode = {
  version_mismatch: 1,
  cookie_mismatch: 2,
  node_mismatch: 3,
  duplicate: 4,
  protocol_error: 5,
} as const;
export type RefuseReason = keyof typeof RefuseCode;

export function refuseReason(code: number): RefuseReason {
  for (const [k, v] of Object.entries(RefuseCode)) if (v === code) return k as RefuseReason;
  return "protocol_error";
}

/** Starts a frame of `kind` in `w` (reserving the length); finish with endFrame. */
export function beginFrame(w: BufWriter, kind: Kind): number {
  const at = w.pos;
  w.u32(0);
  w.u8(kind);
  return at;
}

export function endFrame(w: BufWriter, at: number): void {
  w.patchU32(at, w.pos - at - 4);
}

function frame(kind: Kind, body: (w: BufWriter) => void, size = 64): Buffer {
  const w = new BufWriter(size);
  const at = beginFrame(w, kind);
  body(w);
  endFrame(w, at);
  return w.take();
}

// ---- handshake ---------------------------------------------------------------------------------

export interface Hello {
  version: number;
  nonce: Buffer;
  node: string;
}

export function encodeHello(h: Hello): Buffer {
  return frame(Kind.hello, (w) => {
    w.raw(MAGIC);
    w.u16(h.version);
    w.raw(h.nonce);
    w.str(h.node);
  });
}

export function decodeHello(r: BufReader): Hello {
  if (!r.raw(MAGIC.length).equals(MAGIC)) throw new WireError("not an svc node (bad magic)");
  const version = r.u16();
  // A later version may lay out the rest differently: read it only when it is ours.
  if (version !== PROTOCOL_VERSION) return { version, nonce: Buffer.alloc(0), node: "" };
  const nonce = Buffer.from(r.raw(NONCE_BYTES));
  const node = r.str();
  r.done();
  return { version, nonce, node };
}

export interface Challenge extends Hello {
  mac: Buffer;
}

export function encodeChallenge(c: Challenge): Buffer {
  return frame(Kind.challenge, (w) => {
    w.u16(c.version);
    w.raw(c.nonce);
    w.str(c.node);
    w.raw(c.mac);
  });
}

export function decodeChallenge(r: BufReader): Challenge {
  const version = r.u16();
  if (version !== PROTOCOL_VERSION) return { version, nonce: Buffer.alloc(0), node: "", mac: Buffer.alloc(0) };
  const nonce = Buffer.from(r.raw(NONCE_BYTES));
  const node = r.str();
  const mac = Buffer.from(r.raw(MAC_BYTES));
  r.done();
  return { version, nonce, node, mac };
}

export function encodeAuth(mac: Buffer): Buffer {
  return frame(Kind.auth, (w) => w.raw(mac));
}

export function decodeAuth(r: BufReader): Buffer {
  const mac = Buffer.from(r.raw(MAC_BYTES));
  r.done();
  return mac;
}

export function encodeWelcome(): Buffer {
  return frame(Kind.welcome, () => {}, 8);
}

export function encodeRefuse(reason: RefuseReason, detail: string): Buffer {
  return frame(Kind.refuse, (w) => {
    w.u8(RefuseCode[reason]);
    w.str(detail.slice(0, 1000));
  });
}

export function decodeRefuse(r: BufReader): { reason: RefuseReason; detail: string } {
  const reason = refuseReason(r.u8());
  const detail = r.remaining > 0 ? r.str() : "";
  return { reason, detail };
}

// ---- after the handshake -----------------------------------------------------------------------

export function encodeCall(id: number, method: string, argsJson: string): Buffer {
  return frame(
    Kind.call,
    (w) => {
      w.u32(id);
      w.str(method);
      w.raw(Buffer.from(argsJson, "utf8"));
    },
    argsJson.length + method.length * 3 + 16,
  );
}

export function decodeCall(r: BufReader): { id: number; method: string; args: unknown } {
  const id = r.u32();
  const method = r.str();
  return { id, method, args: parseJson(r.rest()) };
}

export const ReplyStatus = { ok: 0, error: 1 } as const;

export function encodeReply(id: number, status: number, json: string): Buffer {
  return frame(
    Kind.reply,
    (w) => {
      w.u32(id);
      w.u8(status);
      w.raw(Buffer.from(json, "utf8"));
    },
    json.length + 16,
  );
}

export function decodeReply(r: BufReader): { id: number; ok: boolean; body: unknown } {
  const id = r.u32();
  const status = r.u8();
  if (status !== ReplyStatus.ok && status !== ReplyStatus.error) throw new WireError(`bad reply status ${status}`);
  return { id, ok: status === ReplyStatus.ok, body: parseJson(r.rest()) };
}

export const PING = frame(Kind.ping, () => {}, 8);
export const PONG = frame(Kind.pong, () => {}, 8);

function parseJson(text: string): unknown {
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new WireError("bad JSON body");
  }
}
