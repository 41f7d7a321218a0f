// A connected client's ClientInfo for tests that call the auth, ACL, tracing or $SYS code directly:
// an MQTT 5.0 client on the external TCP listener, with what the test sets over the defaults.

import type { ClientInfo } from "../../src/broker/types.ts";

export function clientInfo(o: Partial<ClientInfo> = {}): ClientInfo {
  return {
    clientId: "c1",
    username: undefined,
    peerHost: "127.0.0.1",
    peerPort: 1,
    sockPort: 1883,
    listener: "mqtt:tcp:external",
    zone: "external",
    protoName: "MQTT",
    protoVer: 5,
    isSuperuser: false,
    isBridge: false,
    mountpoint: undefined,
    peerCert: undefined,
    ...o,
  };
}
