// The broker's hookpoints: name -> callback signature. Features (auth, ACL, retainer, rules, $SYS,
// tracing) plug in here instead of patching the core. Fold hooks receive the accumulator last and
// return FoldResult (undefined = unchanged, a value = replaced, stop(v) = final).

import type { FoldResult, Hooks } from "../hooks/hooks.ts";
import type { ClientInfo, Message, SubOpts } from "./types.ts";

export interface Credentials {
  username: string | undefined;
  password: Buffer | undefined;
  /** 5.0 enhanced authentication method, when the client uses one. */
  authMethod: string | undefined;
  authData: Buffer | undefined;
}

export interface AuthResult {
  /** MQTT 5.0 reason code: 0 success, 0x86 bad credentials, 0x87 not authorized, 0x8a banned... */
  rc: number;
  superuser: boolean;
  /** Which provider decided ("anonymous" when no provider did). */
  by: string;
}

export interface EnhancedAuthStep {
  method: string;
  data: Buffer | undefined;
  /** 0 on the CONNECT, then 1, 2... for each AUTH packet. */
  step: number;
  /** State the provider kept from the previous step. */
  state: unknown;
}

export interface EnhancedAuthResult {
  /** 0x00 done, 0x18 continue (send AUTH back), or a failure code. */
  rc: number;
  data?: Buffer;
  state?: unknown;
  superuser?: boolean;
}

export type AclAction = "publish" | "subscribe";
export type AclResult = "allow" | "deny";

export interface TopicFilterReq {
  filter: string;
  opts: SubOpts;
  /** Set by a hook to refuse one entry with this reason code. */
  rc?: number;
}

export interface ConnectedInfo {
  cleanStart: boolean;
  keepalive: number;
  expiryInterval: number;
  connectedAt: number;
  connack: number;
  receiveMaximum: number;
}

/** What a hook may do with a live session. */
export interface SessionHandle {
  readonly clientId: string;
  /** Delivers a retained message for a new subscription (retain flag stays set). */
  deliverRetained(msg: Message, opts: SubOpts): void;
  /** The options `filter` is subscribed with now (another object once re-subscribed); undefined if none. */
  subscribedWith(filter: string): SubOpts | undefined;
}

export interface HookPoints {
  "client.connect": (client: ClientInfo, props: Record<string, unknown> | undefined) => void;
  "client.connack": (client: ClientInfo, rc: number) => void;
  "client.authenticate": (
    client: ClientInfo,
    creds: Credentials,
    acc: AuthResult,
  ) => FoldResult<AuthResult> | Promise<FoldResult<AuthResult>>;
  "client.enhanced_auth": (
    client: ClientInfo,
    step: EnhancedAuthStep,
    acc: EnhancedAuthResult,
  ) => FoldResult<EnhancedAuthResult> | Promise<FoldResult<EnhancedAuthResult>>;
  "client.check_acl": (
    client: ClientInfo,
    action: AclAction,
    topic: string,
    acc: AclResult,
  ) => FoldResult<AclResult> | Promise<FoldResult<AclResult>>;
  "client.connected": (client: ClientInfo, info: ConnectedInfo) => void;
  "client.disconnected": (client: ClientInfo, reason: string) => void;
  "client.subscribe": (
    client: ClientInfo,
    filters: TopicFilterReq[],
    acc: TopicFilterReq[],
  ) => FoldResult<TopicFilterReq[]>;
  "client.unsubscribe": (client: ClientInfo, filters: string[], acc: string[]) => FoldResult<string[]>;
  "session.subscribed": (
    client: ClientInfo,
    filter: string,
    opts: SubOpts,
    isNew: boolean,
    session: SessionHandle,
  ) => void;
  "session.unsubscribed": (client: ClientInfo, filter: string, opts: SubOpts) => void;
  "session.created": (client: ClientInfo) => void;
  "session.resumed": (client: ClientInfo) => void;
  "session.takeovered": (client: ClientInfo) => void;
  "session.discarded": (client: ClientInfo) => void;
  "session.terminated": (client: ClientInfo, reason: string) => void;
  "message.publish": (msg: Message, acc: Message | null) => FoldResult<Message | null>;
  "message.delivered": (client: ClientInfo, msg: Message) => void;
  "message.acked": (client: ClientInfo, msg: Message) => void;
  /** A message nobody received (reason `no_subscribers`). */
  "message.dropped": (msg: Message, by: ClientInfo | undefined, reason: string) => void;
  /** A message not delivered to one subscriber (queue_full, expired, no_local, too_large, qos0_msg...). */
  "delivery.dropped": (client: ClientInfo, msg: Message, reason: string) => void;
  /** An ACL decision was made (by the ACL, from its cache or not). */
  "client.check_acl_complete": (
    client: ClientInfo,
    action: AclAction,
    topic: string,
    result: AclResult,
    isCache: boolean,
  ) => void;
}

export type BrokerHooks = Hooks<HookPoints>;
