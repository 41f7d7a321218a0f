// The bridge configuration the API and CLI tests share: two MQTT bridges to a closed local port,
// `aws` (auto: it keeps Connecting; forwards a/# and b/c, subscribes cmd/# at QoS 1) and `edge`
// (manual: Stopped). Writes `<etcDir>/svc_bridge_mqtt.conf`; answers the address.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "./ports.ts";

export async function writeTwoBridges(etcDir: string): Promise<string> {
  const address = `127.0.0.1:${await freePort()}`;
  writeFileSync(
    join(etcDir, "svc_bridge_mqtt.conf"),
    [
      `bridge.mqtt.aws.address = ${address}`,
      "bridge.mqtt.aws.forwards = a/#,b/c",
      "bridge.mqtt.aws.subscription.1.topic = cmd/#",
      "bridge.mqtt.aws.subscription.1.qos = 1",
      "bridge.mqtt.aws.start_type = auto",
      `bridge.mqtt.edge.address = ${address}`,
      "bridge.mqtt.edge.start_type = manual",
      "",
    ].join("\n"),
  );
  return address;
}
