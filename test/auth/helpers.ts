// Fixtures of the access-control tests: a temp directory for rule, plugin and PSK files written
// before the node starts, and the CONNACK code a raw CONNECT gets (5.0 reason code, or the 3.1.1
// return code).

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { IConnectPacket } from "mqtt-packet";
import { afterAll } from "vitest";
import { Raw } from "../conformance/helpers.ts";
import type { TestNode } from "../helpers/node.ts";

export { cleanup, connect, Raw, uid, useNode, waitUntil } from "../conformance/helpers.ts";

/** A temp directory removed after the file's tests. */
export function useTempDir(): { dir: string; write(name: string, text: string): string } {
  const dir = mkdtempSync(join(tmpdir(), "svc-auth-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return {
    dir,
    write(name, text) {
      const p = join(dir, name);
      writeFileSync(p, text);
      return p;
    },
  };
}

/** CONNECTs over a raw socket; the CONNACK code (5.0 reason code, 3.1.1 return code). */
export async function connackCode(
  node: TestNode,
  version: 4 | 5,
  connect: Omit<Partial<IConnectPacket>, "password"> & { password?: Buffer | string },
): Promise<number> {
  const { password, ...rest } = connect;
  const c: Partial<IConnectPacket> = { ...rest };
  if (password !== undefined) c.password = typeof password === "string" ? Buffer.from(password) : password;
  const { raw, connack } = await Raw.connect(node, version, c);
  raw.destroy();
  return (version === 5 ? connack.reasonCode : connack.returnCode) ?? -1;
}

/** A metric's value on the node. */
export function metric(node: TestNode, name: Parameters<TestNode["broker"]["metrics"]["get"]>[0]): number {
  return node.broker.metrics.get(name);
}
