// The key, certificate and CA an ssl/wss listener serves: read from the configured files, or a
// generated self-signed pair when neither keyfile nor certfile is configured.
import { readFile } from "node:fs/promises";
import { ListenerError } from "./listener.ts";
import { ensureSelfSignedCert } from "./self-signed.ts";
import type { ListenerDeps, ListenerSettings } from "./types.ts";

export interface TlsMaterial {
  key: Buffer;
  cert: Buffer;
  ca?: Buffer;
}

async function readPem(path: string, what: string, listener: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    throw new ListenerError(`${listener}: cannot read ${what} ${path}`, { cause: err });
  }
}

export async function loadTlsMaterial(
  settings: ListenerSettings,
  deps: ListenerDeps,
  listener: string,
): Promise<TlsMaterial> {
  let { keyfile, certfile } = settings;
  if ((keyfile === undefined) !== (certfile === undefined)) {
    throw new ListenerError(`${listener}: keyfile and certfile must be configured together`);
  }
  if (keyfile === undefined || certfile === undefined) {
    ({ keyfile, certfile } = await ensureSelfSignedCert(deps.dataDir, deps.logger, listener));
  }
  const material: TlsMaterial = {
    key: await readPem(keyfile, "keyfile", listener),
    cert: await readPem(certfile, "certfile", listener),
  };
  if (settings.cacertfile !== undefined) material.ca = await readPem(settings.cacertfile, "cacertfile", listener);
  return material;
}
