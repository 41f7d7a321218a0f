// Fallback certificate for ssl/wss listeners configured without keyfile/certfile: generated once
// into <dataDir>/certs/ and reused on later starts. Never meant for production; we say so loudly.
import { randomBytes } from "node:crypto";
import { access, mkdir, rename, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import type { ListenerLogger } from "./types.ts";

export interface CertFiles {
  keyfile: string;
  certfile: string;
}

export const SELF_SIGNED_KEY = "self-signed-key.pem";
export const SELF_SIGNED_CERT = "self-signed-cert.pem";

/** One generation per directory at a time, so an ssl and a wss listener starting together agree. */
const inFlight = new Map<string, Promise<{ files: CertFiles; generated: boolean }>>();

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** Write-then-rename so a crash never leaves a half-written PEM that later starts would reuse. */
async function writeAtomic(path: string, data: string, mode: number): Promise<void> {
  const tmp = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  await writeFile(tmp, data, { mode });
  await rename(tmp, path);
}

async function generateInto(dir: string, files: CertFiles): Promise<void> {
  const host = hostname();
  // Loaded only to generate (about 3 MB of heap a node would otherwise keep for nothing).
  const { generate } = await import("selfsigned");
  const pems = await generate([{ name: "commonName", value: host }], {
    keyType: "rsa",
    keySize: 2048,
    algorithm: "sha256",
    notAfterDate: new Date(Date.now() + 10 * 365 * 24 * 3600 * 1000),
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [
          { type: 2, value: host },
          { type: 2, value: "localhost" },
          { type: 7, ip: "127.0.0.1" },
          { type: 7, ip: "::1" },
        ],
      },
    ],
  });
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeAtomic(files.keyfile, pems.private, 0o600);
  await writeAtomic(files.certfile, pems.cert, 0o644);
}

async function ensure(dataDir: string): Promise<{ files: CertFiles; generated: boolean }> {
  const dir = join(dataDir, "certs");
  const files = { keyfile: join(dir, SELF_SIGNED_KEY), certfile: join(dir, SELF_SIGNED_CERT) };
  if ((await exists(files.keyfile)) && (await exists(files.certfile))) return { files, generated: false };
  await generateInto(dir, files);
  return { files, generated: true };
}

/** Key and certificate paths under <dataDir>/certs/, generating them on first use. */
export async function ensureSelfSignedCert(
  dataDir: string,
  logger: ListenerLogger,
  listener: string,
): Promise<CertFiles> {
  let pending = inFlight.get(dataDir);
  if (pending === undefined) {
    pending = ensure(dataDir).finally(() => inFlight.delete(dataDir));
    inFlight.set(dataDir, pending);
  }
  const { files, generated } = await pending;
  logger.warn(
    { listener, ...files, generated },
    "listener has no keyfile/certfile configured; using a self-signed certificate (not for production)",
  );
  return files;
}
