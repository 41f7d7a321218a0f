// Starts a real svc node for a test: every listener (MQTT and management HTTP) on 127.0.0.1
// port 0, a temp data dir, a silent logger, a fast sweep, a cheap bcrypt cost, no heap trim.
// `close()` stops the node and removes the data dir (a start that fails removes it too).

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config/index.ts";
import { type StartOptions, startNode } from "../../src/main.ts";
import type { SvcNode } from "../../src/node.ts";
import { createLogger } from "../../src/telemetry/logger.ts";

export interface TestNode extends SvcNode {
  dataDir: string;
  /** mqtt://127.0.0.1:<tcp port> */
  url: string;
  /** Stops the node; removes the data dir unless `keepData`. */
  close(keepData?: boolean): Promise<void>;
}

export interface TestNodeOptions {
  /** Extra configuration keys (`mqtt.max_packet_size`: `1KB`...). */
  set?: Record<string, string>;
  /** Reuse a data dir (restart tests). */
  dataDir?: string;
  tickInterval?: number;
  /** Tracing options of startNode (an in-memory span exporter). */
  tracing?: StartOptions["tracing"];
}

export async function startTestNode(opts: TestNodeOptions = {}): Promise<TestNode> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), "svc-test-"));
  try {
    return await startIn(dataDir, opts);
  } catch (err) {
    // A start that fails (the tests of bad settings) leaves no data dir of its own behind.
    if (opts.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}

async function startIn(dataDir: string, opts: TestNodeOptions): Promise<TestNode> {
  const config = loadConfig({
    overrides: {
      "node.data_dir": dataDir,
      "listener.tcp.external": "127.0.0.1:0",
      "listener.ssl.external": "off",
      "listener.ws.external": "127.0.0.1:0",
      "listener.wss.external": "off",
      "management.listener.http": "127.0.0.1:0",
      "management.listener.http_v2": "127.0.0.1:0",
      // Tests share a process: no full collection pauses unless a test asks for them.
      "node.heap_trim_growth": "0",
      ...opts.set,
    },
  });
  const logger = createLogger({ level: process.env.SVC_TEST_LOG === "1" ? "debug" : "critical", node: "test" });
  const node = await startNode(config, {
    logger,
    tickInterval: opts.tickInterval ?? 100,
    bcryptRounds: 4,
    tracing: opts.tracing,
  });
  const url = `mqtt://127.0.0.1:${node.port("tcp")}`;
  return Object.assign(node, {
    dataDir,
    url,
    async close(keepData = false) {
      await node.stop();
      if (!keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  });
}
