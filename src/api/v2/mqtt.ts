// v2 `POST /mqtt/publish|subscribe|unsubscribe` (spec 001 §4): `client_id` (publish default
// `http`), payload default empty, qos default 0, retain default false; answers `result: []`.
// The bodies and their checks are v3's (which also take `clientid`).

import type { ApiDeps } from "../deps.ts";
import { v2done } from "../envelope.ts";
import type { RouteTable } from "../route-table.ts";
import { v2Done } from "../schemas.ts";
import { PublishBody, publishOne, SubscribeBody, subscribeOne, UnsubscribeBody, unsubscribeOne } from "../v3/mqtt.ts";

export function v2MqttRoutes(t: RouteTable, d: ApiDeps): void {
  t.add(
    {
      name: "publish",
      method: "post",
      path: "/mqtt/publish",
      descr: "Publish a message",
      tag: "mqtt",
      body: PublishBody,
      response: v2Done,
    },
    ({ body }) => {
      publishOne(d, body);
      return v2done();
    },
  );

  t.add(
    {
      name: "subscribe",
      method: "post",
      path: "/mqtt/subscribe",
      descr: "Subscribe a connected client to a topic",
      tag: "mqtt",
      body: SubscribeBody,
      response: v2Done,
    },
    async ({ body }) => {
      await subscribeOne(d, body);
      return v2done();
    },
  );

  t.add(
    {
      name: "unsubscribe",
      method: "post",
      path: "/mqtt/unsubscribe",
      descr: "Unsubscribe a connected client from a topic",
      tag: "mqtt",
      body: UnsubscribeBody,
      response: v2Done,
    },
    async ({ body }) => {
      await unsubscribeOne(d, body);
      return v2done();
    },
  );
}
