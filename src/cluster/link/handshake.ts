// The cookie proof of the handshake: fresh random nonces, and HMAC-SHA256 under the shared cookie
// over the protocol version, both node names and both nonces, one proof per role (acceptor,
// dialer) so neither can be replayed or reflected. The cookie itself never leaves the node.

import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { MAC_BYTES, NONCE_BYTES } from "./protocol.ts";
import { BufWriter } from "./wire.ts";

export type Role = "acceptor" | "dialer";

export function newNonce(): Buffer {
  return randomBytes(NONCE_BYTES);
}

export interface ProofInput {
  version: number;
  dialer: string;
  acceptor: string;
  dialerNonce: Buffer;
  acceptorNonce: Buffer;
}

/** The proof `role` sends: HMAC-SHA256(cookie, "svc-link" | role | version | names | nonces). */
export function proof(cookie: string, role: Role, p: ProofInput): Buffer {
  const w = new BufWriter(160);
  w.raw(Buffer.from("svc-link", "latin1"));
  w.u8(role === "acceptor" ? 1 : 2);
  w.u16(p.version);
  w.str(p.dialer);
  w.str(p.acceptor);
  w.raw(p.dialerNonce);
  w.raw(p.acceptorNonce);
  return createHmac("sha256", cookie).update(w.view()).digest();
}

/** Constant-time check of a proof received from the peer playing `role`. */
export function verifyProof(cookie: string, role: Role, p: ProofInput, mac: Buffer): boolean {
  if (mac.length !== MAC_BYTES) return false;
  return timingSafeEqual(proof(cookie, role, p), mac);
}
