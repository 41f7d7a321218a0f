// Settings the core reads, in the core's own shape (milliseconds, bytes, booleans). The
// composition root (main.ts) builds them from the validated configuration; the core never reads
// configuration keys itself.

import type { SharedStrategy } from "./router/shared-strategy.ts";

export interface ZoneSettings {
  /** A connection that sends no CONNECT within this time is closed (ms). */
  idleTimeout: number;
  maxPacketSize: number;
  maxClientIdLen: number;
  /** 0 = unlimited. */
  maxTopicLevels: number;
  maxQosAllowed: 0 | 1 | 2;
  maxTopicAlias: number;
  retainAvailable: boolean;
  wildcardSubscription: boolean;
  sharedSubscription: boolean;
  /** 3.x has no No Local flag: this drops a client's own messages for it. */
  ignoreLoopDeliver: boolean;
  strictMode: boolean;
  /** 5.0 Response Information sent when the client asks; empty = none. */
  responseInformation: string;
  /** 5.0 Server Keep Alive (s), 0 = use the client's. */
  serverKeepalive: number;
  /** Keepalive timeout = keepalive * backoff * 2 (0.75 gives the spec's 1.5x). */
  keepaliveBackoff: number;
  /** 0 = unlimited. */
  maxSubscriptions: number;
  upgradeQos: boolean;
  /** Outgoing QoS 1/2 window; 0 = 65535. 5.0 Receive Maximum of the client lowers it. */
  maxInflight: number;
  retryInterval: number;
  maxAwaitingRel: number;
  awaitRelTimeout: number;
  /** Session expiry (ms) of a 3.x persistent session (clean session = false). */
  sessionExpiryInterval: number;
  /** 0 = unlimited. */
  maxMqueueLen: number;
  mqueueStoreQos0: boolean;
  useUsernameAsClientid: boolean;
  allowAnonymous: boolean;
  /** What a denied publish/subscribe does to the connection. */
  aclDenyAction: "ignore" | "disconnect";
}

export interface BrokerSettings {
  nodeName: string;
  sharedStrategy: SharedStrategy;
  zones: Map<string, ZoneSettings>;
  /** Sweep period of the timer wheel: keepalive, retries, expiries (ms). */
  tickInterval: number;
}

export const DEFAULT_ZONE: ZoneSettings = {
  idleTimeout: 15_000,
  maxPacketSize: 1024 * 1024,
  maxClientIdLen: 65535,
  maxTopicLevels: 128,
  maxQosAllowed: 2,
  maxTopicAlias: 65535,
  retainAvailable: true,
  wildcardSubscription: true,
  sharedSubscription: true,
  ignoreLoopDeliver: false,
  strictMode: false,
  responseInformation: "",
  serverKeepalive: 0,
  keepaliveBackoff: 0.75,
  maxSubscriptions: 0,
  upgradeQos: false,
  maxInflight: 32,
  retryInterval: 30_000,
  maxAwaitingRel: 100,
  awaitRelTimeout: 300_000,
  sessionExpiryInterval: 7_200_000,
  maxMqueueLen: 1000,
  mqueueStoreQos0: true,
  useUsernameAsClientid: false,
  allowAnonymous: true,
  aclDenyAction: "ignore",
};
