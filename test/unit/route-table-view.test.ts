// The /routes view: the cluster route table (this node's filters and the other nodes' routes,
// from RemoteRoutes) is built and sorted once per version of the two tables; a filter that comes
// or goes here or on another node makes a new one, another subscriber of a known filter does not.
import { describe, expect, it } from "vitest";
import { Broker } from "../../src/broker/broker.ts";
import { DEFAULT_ZONE } from "../../src/broker/settings.ts";
import { RemoteRoutes } from "../../src/cluster/remote-routes.ts";
import { LocalCalls } from "../../src/services/cluster-calls.ts";
import { SubscriptionService } from "../../src/services/subscriptions.ts";
import { createLogger } from "../../src/telemetry/logger.ts";
import { QOS0 as opts, recordingSubscriber as sub } from "../helpers/router-subscriber.ts";

function setup() {
  const broker = new Broker(
    { nodeName: "n1", sharedStrategy: "random", zones: new Map([["external", DEFAULT_ZONE]]), tickInterval: 1000 },
    createLogger({ level: "critical", node: "t" }),
  );
  const remote = new RemoteRoutes("n1");
  return { router: broker.router, remote, subs: new SubscriptionService(broker, new LocalCalls("n1"), remote) };
}

describe("route table view", () => {
  it("builds the table again only when a route came or went", () => {
    const { router, remote, subs } = setup();
    const a = sub("a");
    router.add("t/b", a, opts, undefined);
    router.add("t/#", a, opts, undefined);
    remote.add("t/a", "n0");
    const first = subs.clusterRoutes();
    expect(first).toEqual([
      { topic: "t/a", node: "n0" },
      { topic: "t/#", node: "n1" },
      { topic: "t/b", node: "n1" },
    ]);
    expect(subs.clusterRoutes()).toBe(first);
    router.add("t/b", sub("b"), opts, undefined); // a known filter: same routes
    remote.add("t/a", "n0"); // a route already known
    remote.remove("t/x", "n0"); // no such route
    expect(subs.clusterRoutes()).toBe(first);

    router.add("t/c", a, opts, undefined);
    const second = subs.clusterRoutes();
    expect(second).not.toBe(first);
    expect(second.map((r) => r.topic)).toEqual(["t/a", "t/#", "t/b", "t/c"]);
    router.remove("t/c", a, undefined);
    expect(subs.clusterRoutes().map((r) => r.topic)).toEqual(["t/a", "t/#", "t/b"]);

    remote.add("t/b", "n2");
    const third = subs.clusterRoutes();
    expect(third.map((r) => `${r.node}:${r.topic}`)).toEqual(["n0:t/a", "n1:t/#", "n1:t/b", "n2:t/b"]);
    remote.removeNode("n0");
    expect(subs.clusterRoutes().map((r) => `${r.node}:${r.topic}`)).toEqual(["n1:t/#", "n1:t/b", "n2:t/b"]);
  });

  it("answers one filter's routes from both tables", () => {
    const { router, remote, subs } = setup();
    router.add("r/1", sub("a"), opts, undefined);
    remote.add("r/1", "n3");
    remote.add("r/1", "n0");
    remote.add("r/2", "n0");
    expect(subs.clusterRoute("r/1")).toEqual([
      { topic: "r/1", node: "n0" },
      { topic: "r/1", node: "n1" },
      { topic: "r/1", node: "n3" },
    ]);
    expect(subs.clusterRoute("r/3")).toEqual([]);
  });
});
