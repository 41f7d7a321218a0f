// The back-end drivers are loaded when a provider first opens its connections, not at start: a
// started node (every provider registered, none loaded) has none of pg, mysql2, ioredis, mongodb,
// ldapts in the module cache; loading svc_auth_pgsql brings pg in. (This file runs in its own
// worker, so nothing else loaded them before.)

import { createRequire } from "node:module";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestNode, type TestNode } from "../helpers/node.ts";

const DRIVERS = ["pg", "mysql2", "ioredis", "mongodb", "ldapts"];
const loaded = (): string[] => {
  const cache = createRequire(import.meta.url).cache;
  return DRIVERS.filter((d) => Object.keys(cache).some((k) => k.includes(`/node_modules/${d}/`)));
};

let node: TestNode;
beforeAll(async () => {
  node = await startTestNode({});
});
afterAll(async () => {
  await node?.close();
});

it("a started node has loaded no back-end driver; a provider's first load brings its own in", async () => {
  expect(loaded()).toEqual([]);
  await node.plugins.load("svc_auth_pgsql");
  expect(loaded()).toEqual(["pg"]);
  await node.plugins.unload("svc_auth_pgsql");
});
