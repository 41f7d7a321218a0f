// Heavy clients are loaded only by the nodes that use them: a started single node (every provider
// registered, none loaded) has none of the back-end drivers (pg, mysql2, ioredis, mongodb,
// ldapts), nor the etcd client, nor the Kubernetes client in the module cache; loading
// svc_auth_pgsql brings pg in. (This file runs in its own worker, so nothing else loaded them.)

import { createRequire } from "node:module";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestNode, type TestNode } from "../helpers/node.ts";

const DRIVERS = ["pg", "mysql2", "ioredis", "mongodb", "ldapts"];
const CLUSTER_CLIENTS = ["etcd3", "@grpc/grpc-js", "@kubernetes/client-node"];
const loaded = (names = DRIVERS): string[] => {
  const cache = createRequire(import.meta.url).cache;
  return names.filter((d) => Object.keys(cache).some((k) => k.includes(`/node_modules/${d}/`)));
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
  expect(loaded(CLUSTER_CLIENTS)).toEqual([]);
  await node.plugins.load("svc_auth_pgsql");
  expect(loaded()).toEqual(["pg"]);
  await node.plugins.unload("svc_auth_pgsql");
});
