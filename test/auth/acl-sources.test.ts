// The ACL chain for providers that carry rules (http, jwt, databases join it later): sources are
// asked in the order added, before the file's rules; undefined passes to the next; asynchronous
// answers are cached like synchronous ones; a failing source fails closed (deny, not cached);
// removing a source empties the caches.

import { describe, expect, it } from "vitest";
import { Acl, type AclSource } from "../../src/auth/acl.ts";
import { Broker } from "../../src/broker/broker.ts";
import type { AclResult } from "../../src/broker/hookpoints.ts";
import { DEFAULT_ZONE } from "../../src/broker/settings.ts";
import type { ClientInfo } from "../../src/broker/types.ts";
import { createLogger } from "../../src/telemetry/logger.ts";
import { clientInfo } from "../helpers/client-info.ts";
import { useTempDir } from "./helpers.ts";

const files = useTempDir();
const logger = createLogger({ level: "critical", node: "t" });

function setup(rules: string) {
  const broker = new Broker(
    {
      nodeName: "t@127.0.0.1",
      sharedStrategy: "random",
      zones: new Map([["external", DEFAULT_ZONE]]),
      tickInterval: 1000,
    },
    logger,
  );
  const acl = new Acl(
    broker,
    {
      file: files.write(`acl-${Math.random()}.conf`, rules),
      nomatch: "deny",
      cacheEnabled: true,
      cacheMaxSize: 8,
      cacheTtl: 60_000,
    },
    () => true,
    logger,
  );
  acl.start();
  const client: ClientInfo = clientInfo({ clientId: "c", username: "u" });
  const check = (topic: string) =>
    broker.hooks.fold("client.check_acl", [client, "publish", topic], "allow" as AclResult, "deny") as
      | AclResult
      | Promise<AclResult>;
  return { acl, client, check };
}

function source(name: string, answers: Record<string, AclResult>, log: string[], async = false): AclSource {
  return {
    name,
    check(_c, _a, topic) {
      log.push(`${name}:${topic}`);
      const a = answers[topic];
      return async ? Promise.resolve(a) : a;
    },
  };
}

describe("ACL sources", () => {
  it("are asked in order before the file; undefined passes on; the file and acl_nomatch come last", async () => {
    const { acl, check } = setup("Allow all publish file/#\n");
    const log: string[] = [];
    acl.addSource(source("a", { "a/x": "deny" }, log));
    acl.addSource(source("b", { "a/x": "allow", "b/x": "allow", "file/x": "deny" }, log, true));
    expect(await check("a/x")).toBe("deny");
    expect(log).toEqual(["a:a/x"]);
    expect(await check("b/x")).toBe("allow");
    expect(await check("file/x")).toBe("deny");
    expect(await check("file/y")).toBe("allow");
    expect(await check("other")).toBe("deny");
    acl.removeSource("b");
    expect(await check("file/x")).toBe("allow");
  });

  it("caches asynchronous answers; a failing source denies without caching", async () => {
    const { acl, client, check } = setup("");
    let calls = 0;
    let fail = true;
    acl.addSource({
      name: "flaky",
      check: () => {
        calls++;
        return fail ? Promise.reject(new Error("back end down")) : Promise.resolve("allow" as const);
      },
    });
    expect(await check("t")).toBe("deny");
    expect(acl.cacheEntries(client)).toEqual([]);
    fail = false;
    expect(await check("t")).toBe("allow");
    expect(check("t")).toBe("allow"); // from the cache, synchronously
    expect(calls).toBe(2);
    expect(acl.cacheEntries(client)).toEqual([
      { access: "publish", result: "allow", topic: "t", updated_time: expect.any(Number) },
    ]);
    acl.stop();
  });
});
