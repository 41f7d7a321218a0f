// Built-in $SYS subscription guard: by default only a client on the local host may subscribe to
// `$SYS/...` (spec section 5, "Access control"). It is a stand-in on hook `client.check_acl` until
// the ACL issue's rule file (whose default rules say the same, and let the `dashboard` user in)
// replaces it: that plugin removes this guard with `removeSysGuard`. It runs after ACL providers
// (PRIORITY.sysGuard < PRIORITY.acl), so a provider's final answer wins, and skips publishes.
// Superusers never reach ACL hooks (the core skips them).

import type { Broker } from "../broker/broker.ts";
import type { AclAction, AclResult } from "../broker/hookpoints.ts";
import type { ClientInfo } from "../broker/types.ts";
import { stop } from "../hooks/hooks.ts";
import { PRIORITY } from "../hooks/priorities.ts";
import { parseSharedFilter } from "../mqtt/topic.ts";

export const SYS_GUARD_OWNER = "svc_sys_guard";

/** Loopback peers: 127.0.0.0/8 and ::1 (IPv4-mapped forms are normalized by the listeners). */
export function isLocalPeer(host: string): boolean {
  return host === "::1" || host.startsWith("127.") || host.startsWith("::ffff:127.");
}

/** A filter that can match `$SYS` topics: `$SYS...`, also inside `$share/<g>/` or `$queue/`. */
export function isSysFilter(filter: string): boolean {
  if (filter.startsWith("$SYS")) return true;
  return parseSharedFilter(filter)?.filter.startsWith("$SYS") === true;
}

/** The hook callback: deny a `$SYS` subscription from a non-local peer, else leave the answer. */
export function sysGuard(client: ClientInfo, action: AclAction, topic: string, _acc: AclResult) {
  if (action !== "subscribe" || !isSysFilter(topic) || isLocalPeer(client.peerHost)) return undefined;
  return stop<AclResult>("deny");
}

export function addSysGuard(broker: Broker): void {
  broker.hooks.add("client.check_acl", sysGuard, PRIORITY.sysGuard, SYS_GUARD_OWNER);
}

export function removeSysGuard(broker: Broker): void {
  broker.hooks.removeOwner(SYS_GUARD_OWNER);
}
