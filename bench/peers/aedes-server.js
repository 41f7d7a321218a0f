// Aedes as a bench peer: one Node process, a plain TCP server on 127.0.0.1 (port 0 unless given
// as the first argument), default options. Prints {"port":N,"aedes":"x.y.z"} once listening;
// exits on SIGTERM/SIGINT or when its stdin closes (the bench runner is gone).

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { Aedes } from "aedes";
import { exitWithRunner } from "./runner-exit.js";

const require = createRequire(import.meta.url);
const version = JSON.parse(readFileSync(join(dirname(require.resolve("aedes")), "package.json"), "utf8")).version;

const aedes = await Aedes.createBroker();
const server = createServer(aedes.handle);
server.listen(Number(process.argv[2] ?? 0), "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port, aedes: version })}\n`);
});
exitWithRunner();
