// SCRAM-SHA-256 (RFC 5802, RFC 7677) with node:crypto: the server's side of the exchange and the
// derivation of stored credentials. No channel binding (a gs2 header of `n` or `y` only), no
// authorization identity other than the user itself, names compared as sent (no SASLprep).
//
//   client-first  n,,n=<user>,r=<cnonce>
//   server-first  r=<cnonce><snonce>,s=<base64 salt>,i=<iterations>
//   client-final  c=<base64 gs2 header>,r=<nonce>,p=<base64 ClientProof>
//   server-final  v=<base64 ServerSignature>      (or e=<error>)
//
// SaltedPassword = PBKDF2-SHA-256(password, salt, i); ClientKey = HMAC(SaltedPassword, "Client Key");
// StoredKey = SHA-256(ClientKey); ServerKey = HMAC(SaltedPassword, "Server Key"); AuthMessage =
// client-first-bare "," server-first "," client-final-without-proof; ClientProof = ClientKey XOR
// HMAC(StoredKey, AuthMessage); ServerSignature = HMAC(ServerKey, AuthMessage).

import { createHash, createHmac, pbkdf2, pbkdf2Sync, randomBytes, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";

export const SCRAM_SHA_256 = "SCRAM-SHA-256";

const pbkdf2Async = promisify(pbkdf2);

/** What the server keeps per user (never the password). */
export interface ScramCredential {
  salt: Buffer;
  iterations: number;
  storedKey: Buffer;
  serverKey: Buffer;
}

export function hmac(key: Buffer, data: string | Buffer): Buffer {
  return createHmac("sha256", key).update(data).digest();
}

export function sha256(data: Buffer): Buffer {
  return createHash("sha256").update(data).digest();
}

export function xor(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.alloc(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i] ^ b[i];
  return out;
}

function fromSalted(salted: Buffer, salt: Buffer, iterations: number): ScramCredential {
  return {
    salt,
    iterations,
    storedKey: sha256(hmac(salted, "Client Key")),
    serverKey: hmac(salted, "Server Key"),
  };
}

/** Derives the stored credential of `password` (a random 16-byte salt unless given). */
export async function deriveScram(
  password: string,
  iterations: number,
  salt = randomBytes(16),
): Promise<ScramCredential> {
  const salted = await pbkdf2Async(Buffer.from(password, "utf8"), salt, iterations, 32, "sha256");
  return fromSalted(salted, salt, iterations);
}

export function deriveScramSync(password: string, iterations: number, salt: Buffer): ScramCredential {
  return fromSalted(pbkdf2Sync(Buffer.from(password, "utf8"), salt, iterations, 32, "sha256"), salt, iterations);
}

/** Parses `a=1,b=2` attributes; a value may contain `=`. */
function attrs(s: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const part of s.split(",")) {
    if (part.length < 2 || part[1] !== "=") throw new ScramError("invalid-encoding");
    m.set(part[0], part.slice(2));
  }
  return m;
}

/** RFC 5802 saslname: `=2C` is `,`, `=3D` is `=`, any other `=` is invalid. */
export function decodeSaslName(s: string): string {
  if (/=(?!2C|3D)/.test(s)) throw new ScramError("invalid-username-encoding");
  return s.replace(/=2C/g, ",").replace(/=3D/g, "=");
}

/** A failure of the exchange; `message` is the RFC 5802 server-error value. */
export class ScramError extends Error {}

export interface ClientFirst {
  gs2Header: string;
  bare: string;
  username: string;
  clientNonce: string;
}

export function parseClientFirst(msg: string): ClientFirst {
  // gs2-header = cbind-flag "," [authzid] ","
  const m = /^([ny]|p=[^,]*),(a=[^,]*)?,(.*)$/s.exec(msg);
  if (m === null) throw new ScramError("invalid-encoding");
  if (m[1].startsWith("p=")) throw new ScramError("channel-bindings-not-supported");
  const bare = m[3];
  const a = attrs(bare);
  if (a.has("m")) throw new ScramError("extensions-not-supported");
  const user = a.get("n");
  const nonce = a.get("r");
  if (user === undefined || user === "" || nonce === undefined || nonce === "")
    throw new ScramError("invalid-encoding");
  if (!/^[\x21-\x2b\x2d-\x7e]+$/.test(nonce)) throw new ScramError("invalid-encoding");
  const username = decodeSaslName(user);
  if (m[2] !== undefined && decodeSaslName(m[2].slice(2)) !== username) throw new ScramError("invalid-proof");
  return { gs2Header: `${m[1]},${m[2] ?? ""},`, bare, username, clientNonce: nonce };
}

/** The server's state between server-first and client-final. */
export interface ScramServerState {
  first: ClientFirst;
  serverFirst: string;
  nonce: string;
  cred: ScramCredential;
}

export function serverFirst(first: ClientFirst, cred: ScramCredential, serverNonce?: string): ScramServerState {
  const nonce = first.clientNonce + (serverNonce ?? randomBytes(18).toString("base64"));
  const msg = `r=${nonce},s=${cred.salt.toString("base64")},i=${cred.iterations}`;
  return { first, serverFirst: msg, nonce, cred };
}

/** Checks client-final; the server-final (`v=...`) when the proof is right, else ScramError. */
export function serverFinal(state: ScramServerState, clientFinal: string): string {
  const i = clientFinal.lastIndexOf(",p=");
  if (i < 0) throw new ScramError("invalid-encoding");
  const withoutProof = clientFinal.slice(0, i);
  const a = attrs(withoutProof);
  if (a.get("c") !== Buffer.from(state.first.gs2Header).toString("base64"))
    throw new ScramError("channel-bindings-dont-match");
  if (a.get("r") !== state.nonce) throw new ScramError("invalid-proof");
  const proof = Buffer.from(clientFinal.slice(i + 3), "base64");
  const authMessage = `${state.first.bare},${state.serverFirst},${withoutProof}`;
  const { storedKey, serverKey } = state.cred;
  if (proof.length !== storedKey.length) throw new ScramError("invalid-proof");
  const clientKey = xor(proof, hmac(storedKey, authMessage));
  if (!timingSafeEqual(sha256(clientKey), storedKey)) throw new ScramError("invalid-proof");
  return `v=${hmac(serverKey, authMessage).toString("base64")}`;
}
