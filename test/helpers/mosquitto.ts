// A real Eclipse Mosquitto broker (Debian's `mosquitto`) for tests that need a second, independent
// MQTT broker: anonymous, one listener on 127.0.0.1 at a free port. `close()` stops it and removes
// its temp dir. `HAVE_MOSQUITTO` is false when the binary is missing (the tests then skip).

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect as tcpConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./ports.ts";
import { waitUntil } from "./wait.ts";

export const HAVE_MOSQUITTO = spawnSync("mosquitto", ["-h"], { stdio: "ignore" }).error === undefined;

export interface Mosquitto {
  port: number;
  url: string;
  close(): Promise<void>;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = tcpConnect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

/** A Mosquitto broker on a free port; `extra`: more lines of its configuration. */
export async function startMosquitto(extra: string[] = []): Promise<Mosquitto> {
  const dir = mkdtempSync(join(tmpdir(), "svc-mosquitto-"));
  const port = await freePort();
  const conf = join(dir, "mosquitto.conf");
  const lines = [`listener ${port} 127.0.0.1`, "allow_anonymous true", "persistence false", ...extra];
  writeFileSync(conf, `${lines.join("\n")}\n`);
  const proc: ChildProcess = spawn("mosquitto", ["-c", conf], { stdio: "ignore" });
  let exited = false;
  proc.once("exit", () => {
    exited = true;
  });
  try {
    await waitUntil(async () => exited || (await accepts(port)), "mosquitto to listen", 10_000);
    if (exited) throw new Error("mosquitto exited at start");
  } catch (err) {
    proc.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    port,
    url: `mqtt://127.0.0.1:${port}`,
    async close() {
      if (!exited) {
        const gone = new Promise((r) => proc.once("exit", r));
        proc.kill("SIGTERM");
        await gone;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
