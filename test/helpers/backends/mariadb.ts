// A real MariaDB for tests: `mariadb-install-db` into a temp dir, then `mariadbd` on 127.0.0.1 and a
// free port, with an init file creating the database `mqtt` and the user `svc`@`127.0.0.1` with a
// password (so the provider's login is real). As root, `--user=root`. stop() is a normal shutdown
// (clients are cut). Missing binaries: see describeBackend.

import { execFile } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  type BackendProvider,
  type BackendServer,
  backendTempDir,
  findBinary,
  freePort,
  restartable,
  spawnServer,
} from "./process.ts";

export const MARIADB_INSTALL_HINT = "apt-get install mariadb-server";
export const MARIADB_USER = "svc";
export const MARIADB_PASSWORD = "svc-test-pw";
export const MARIADB_DATABASE = "mqtt";

const DIRS = ["/usr/sbin", "/usr/bin"];

export function findMariadb(): BackendProvider {
  const install = findBinary("mariadb-install-db", DIRS) ?? findBinary("mysql_install_db", DIRS);
  const server = findBinary("mariadbd", DIRS) ?? findBinary("mysqld", DIRS);
  if (install === undefined || server === undefined) {
    return {
      available: false,
      reason: `no mariadb-install-db/mariadbd: install them with \`${MARIADB_INSTALL_HINT}\``,
    };
  }
  return { available: true, start: () => startMariadb(install, server) };
}

async function startMariadb(install: string, server: string): Promise<BackendServer> {
  const dir = backendTempDir("mariadb");
  try {
    const data = join(dir, "data");
    const asRoot = process.getuid?.() === 0 ? ["--user=root"] : [];
    await promisify(execFile)(
      install,
      ["--no-defaults", `--datadir=${data}`, "--auth-root-authentication-method=normal", "--skip-test-db", ...asRoot],
      { timeout: 60_000 },
    );
    const init = join(dir, "init.sql");
    writeFileSync(
      init,
      [
        `CREATE DATABASE IF NOT EXISTS ${MARIADB_DATABASE};`,
        `CREATE USER IF NOT EXISTS '${MARIADB_USER}'@'127.0.0.1' IDENTIFIED BY '${MARIADB_PASSWORD}';`,
        `GRANT ALL ON ${MARIADB_DATABASE}.* TO '${MARIADB_USER}'@'127.0.0.1';`,
        "",
      ].join("\n"),
    );
    const port = await freePort();
    const args = [
      "--no-defaults",
      `--datadir=${data}`,
      `--socket=${join(dir, "sock")}`,
      `--port=${port}`,
      "--bind-address=127.0.0.1",
      "--skip-name-resolve",
      `--init-file=${init}`,
      `--pid-file=${join(dir, "pid")}`,
      "--innodb-buffer-pool-size=16M",
      "--skip-log-bin",
      ...asRoot,
    ];
    const run = () => spawnServer(server, args, /ready for connections/);
    return restartable(port, dir, await run(), run, "SIGTERM");
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
