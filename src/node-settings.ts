// Settings from configuration: the validated Config turned into each part's own settings (the
// core's zones and broker settings, $SYS, access control, the management listeners, the link's
// TLS material). Pure mapping, no wiring: main.ts builds the parts with these.

import { readFileSync } from "node:fs";
import type { ManagementBind } from "./api/index.ts";
import type { AccessControlSettings, ZoneAccess } from "./auth/index.ts";
import type { BrokerSettings, ZoneSettings } from "./broker/settings.ts";
import type { Config, ZoneConfig } from "./config/index.ts";
import type { SysSettings } from "./sys/index.ts";

/** TLS material of the inter-node link, when rpc.tls.keyfile and rpc.tls.certfile are set. */
export function linkTls(config: Config): { key: Buffer; cert: Buffer; ca?: Buffer } | undefined {
  const keyfile = config.get("rpc.tls.keyfile");
  const certfile = config.get("rpc.tls.certfile");
  if (keyfile === undefined || certfile === undefined) return undefined;
  const cafile = config.get("rpc.tls.cacertfile");
  return {
    key: readFileSync(keyfile),
    cert: readFileSync(certfile),
    ...(cafile === undefined ? {} : { ca: readFileSync(cafile) }),
  };
}

export function zoneSettings(z: ZoneConfig): ZoneSettings {
  return {
    idleTimeout: z.idleTimeout,
    maxPacketSize: z.maxPacketSize,
    maxClientIdLen: z.maxClientidLen,
    maxTopicLevels: z.maxTopicLevels,
    maxQosAllowed: z.maxQosAllowed as 0 | 1 | 2,
    maxTopicAlias: z.maxTopicAlias,
    retainAvailable: z.retainAvailable,
    wildcardSubscription: z.wildcardSubscription,
    sharedSubscription: z.sharedSubscription,
    ignoreLoopDeliver: z.ignoreLoopDeliver,
    strictMode: z.strictMode,
    responseInformation: z.responseInformation,
    serverKeepalive: z.serverKeepalive,
    keepaliveBackoff: z.keepaliveBackoff,
    maxSubscriptions: z.maxSubscriptions,
    upgradeQos: z.upgradeQos,
    maxInflight: z.maxInflight,
    retryInterval: z.retryInterval,
    maxAwaitingRel: z.maxAwaitingRel,
    awaitRelTimeout: z.awaitRelTimeout,
    sessionExpiryInterval: z.sessionExpiryInterval,
    maxMqueueLen: z.maxMqueueLen,
    mqueueStoreQos0: z.mqueueStoreQos0,
    useUsernameAsClientid: z.useUsernameAsClientid,
    allowAnonymous: z.allowAnonymous,
    aclDenyAction: z.aclDenyAction,
  };
}

export function brokerSettings(config: Config): BrokerSettings {
  const zones = new Map<string, ZoneSettings>();
  const names = new Set(["external", "internal", ...config.listeners().map((l) => l.zone)]);
  for (const name of names) zones.set(name, zoneSettings(config.zone(name)));
  return {
    nodeName: config.get("node.name"),
    sharedStrategy: config.get("broker.shared_subscription_strategy"),
    zones,
    tickInterval: 1000,
  };
}

export function sysSettings(config: Config): SysSettings {
  return {
    publisher: { interval: config.get("broker.sys_interval"), heartbeat: config.get("broker.sys_heartbeat") },
    sysmon: {
      longGc: config.get("sysmon.long_gc"),
      longSchedule: config.get("sysmon.long_schedule"),
      largeHeap: config.get("sysmon.large_heap"),
      busyPort: config.get("sysmon.busy_port"),
      busyPortBytes: config.get("sysmon.busy_port_bytes"),
      busyDistPort: config.get("sysmon.busy_dist_port"),
      window: config.get("sysmon.window"),
    },
    osmon: {
      cpuCheckInterval: config.get("sysmon.os.cpu_check_interval"),
      cpuHighWatermark: config.get("sysmon.os.cpu_high_watermark"),
      cpuLowWatermark: config.get("sysmon.os.cpu_low_watermark"),
      memCheckInterval: config.get("sysmon.os.mem_check_interval"),
      sysmemHighWatermark: config.get("sysmon.os.sysmem_high_watermark"),
      procmemHighWatermark: config.get("sysmon.os.procmem_high_watermark"),
    },
    heapTrim: { growth: config.get("node.heap_trim_growth") },
  };
}

/** The access-control settings: ACL file and cache, per-zone switches, ban sweep period. */
export function accessSettings(config: Config, tickInterval: number): AccessControlSettings {
  const zones = new Map<string, ZoneAccess>();
  return {
    acl: {
      file: config.get("acl_file"),
      nomatch: config.get("acl_nomatch"),
      cacheEnabled: config.get("enable_acl_cache"),
      cacheMaxSize: config.get("acl_cache_max_size"),
      cacheTtl: config.get("acl_cache_ttl"),
    },
    zone(name) {
      let z = zones.get(name);
      if (z === undefined) {
        const c = config.zone(name);
        z = { enableAcl: c.enableAcl, enableBan: c.enableBan, bypassAuthPlugins: c.bypassAuthPlugins };
        zones.set(name, z);
      }
      return z;
    },
    banSweepInterval: tickInterval,
  };
}

/** The management API's listeners that are not `off`. */
export function managementBinds(config: Config): ManagementBind[] {
  const out: ManagementBind[] = [];
  for (const name of ["http", "http_v2"] as const) {
    const b = config.get(`management.listener.${name}`);
    if (b !== null) out.push({ name, host: b.host, port: b.port });
  }
  return out;
}
