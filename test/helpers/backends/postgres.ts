// A real PostgreSQL for tests: `initdb` (scram-sha-256, the superuser `postgres` with a password,
// so the provider's login is real) into a temp dir, then `postgres` on 127.0.0.1 and a free port,
// fsync off. Both run as the `postgres` OS user when the tests run as root (initdb refuses root).
// stop() is a fast shutdown (clients are cut). Missing binaries: see describeBackend.

import { execFile } from "node:child_process";
import { chownSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  type BackendProvider,
  type BackendServer,
  backendTempDir,
  findBinary,
  freePort,
  osUser,
  restartable,
  spawnServer,
} from "./process.ts";

export const POSTGRES_INSTALL_HINT = "apt-get install postgresql";
export const POSTGRES_USER = "postgres";
export const POSTGRES_PASSWORD = "svc-test-pw";

const PG_DIRS = ["/usr/lib/postgresql/17/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/15/bin"];

export function findPostgres(): BackendProvider {
  const initdb = findBinary("initdb", PG_DIRS);
  const postgres = findBinary("postgres", PG_DIRS);
  if (initdb === undefined || postgres === undefined) {
    return { available: false, reason: `no initdb/postgres: install them with \`${POSTGRES_INSTALL_HINT}\`` };
  }
  const root = process.getuid?.() === 0;
  const user = root ? osUser("postgres") : undefined;
  if (root && user === undefined) return { available: false, reason: "running as root without a postgres OS user" };
  return { available: true, start: () => startPostgres(initdb, postgres, user) };
}

async function startPostgres(
  initdb: string,
  postgres: string,
  user: { uid: number; gid: number } | undefined,
): Promise<BackendServer> {
  const dir = backendTempDir("pg");
  try {
    if (user !== undefined) chownSync(dir, user.uid, user.gid);
    const pwfile = join(dir, "pw");
    writeFileSync(pwfile, `${POSTGRES_PASSWORD}\n`);
    if (user !== undefined) chownSync(pwfile, user.uid, user.gid);
    const data = join(dir, "data");
    await promisify(execFile)(
      initdb,
      ["-D", data, "-U", POSTGRES_USER, "--auth=scram-sha-256", `--pwfile=${pwfile}`, "-N", "-E", "UTF8"],
      { ...user, timeout: 60_000 },
    );
    const port = await freePort();
    const args = ["-D", data, "-k", dir, "-p", String(port), "-h", "127.0.0.1"];
    const fast = ["-c", "fsync=off", "-c", "full_page_writes=off", "-c", "synchronous_commit=off"];
    const run = () => spawnServer(postgres, [...args, ...fast], /ready to accept connections/, { ...user });
    return restartable(port, dir, await run(), run, "SIGINT", "SIGINT");
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
