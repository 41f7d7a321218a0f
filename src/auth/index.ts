// Access control, assembled: the authentication chain that the auth plugins join, bans and the ACL
// (both built in, as in the family). main.ts creates it before the plugins are registered (the
// providers need the chain), starts it after $SYS (the ACL removes the built-in $SYS guard) and
// stops it after the listeners.

import type { Broker } from "../broker/broker.ts";
import type { ClusterKeys } from "../cluster/keys.ts";
import type { ClusterStore } from "../cluster/store.ts";
import type { Logger } from "../telemetry/logger.ts";
import { Acl, type AclSettings } from "./acl.ts";
import { Bans } from "./banned.ts";
import { AuthChain } from "./chain.ts";

export interface ZoneAccess {
  /** `zone.<zone>.enable_acl`. */
  enableAcl: boolean;
  /** `zone.<zone>.enable_ban`. */
  enableBan: boolean;
  /** `zone.<zone>.bypass_auth_plugins`. */
  bypassAuthPlugins: boolean;
}

export interface AccessControlSettings {
  acl: AclSettings;
  zone: (name: string) => ZoneAccess;
  /** Period of the ban expiry sweep (ms). */
  banSweepInterval: number;
}

export type AccessLogger = Logger;

export class AccessControl {
  readonly chain: AuthChain;
  readonly bans: Bans;
  readonly acl: Acl;

  constructor(broker: Broker, store: ClusterStore, keys: ClusterKeys, s: AccessControlSettings, logger: AccessLogger) {
    this.chain = new AuthChain(broker.hooks, (zone) => s.zone(zone).bypassAuthPlugins);
    this.bans = new Bans(broker, store, keys, {
      enabled: (zone) => s.zone(zone).enableBan,
      logger,
      sweepInterval: s.banSweepInterval,
    });
    this.acl = new Acl(broker, s.acl, (zone) => s.zone(zone).enableAcl, logger);
  }

  /** Loads bans and ACL rules (AclFileError when the rule file does not parse). */
  async start(): Promise<void> {
    await this.bans.start();
    this.acl.start();
  }

  async stop(): Promise<void> {
    this.acl.stop();
    await this.bans.stop();
  }
}
