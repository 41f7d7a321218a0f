// The authentication chain (spec section 5 "MQTT clients", emqx-facts §5): every provider is a
// callback on the `client.authenticate` fold at PRIORITY.auth, added when its plugin starts, so
// equal priorities run in start order and the provider started first checks first. A provider
// answers allow (the fold stops with success and the superuser flag), deny (stops with a refusal
// code: 0x86 bad user name or password, 0x87 not authorized...) or ignore (undefined: the next
// provider is asked). When none decides, the fold's start value stands: success when
// `allow_anonymous` is on, 0x87 otherwise (the core builds it). Bans run before the chain
// (PRIORITY.banned); clients of a zone with `bypass_auth_plugins` skip the providers.
// A provider may also offer a 5.0 enhanced authentication method (addMethod): a callback on the
// `client.enhanced_auth` fold at the same priority, under the same owner, so it keeps the chain
// order, runs after the bans and leaves with its plugin.

import type {
  AuthResult,
  BrokerHooks,
  Credentials,
  EnhancedAuthResult,
  EnhancedAuthStep,
} from "../broker/hookpoints.ts";
import type { ClientInfo } from "../broker/types.ts";
import { stop } from "../hooks/hooks.ts";
import { PRIORITY } from "../hooks/priorities.ts";
import { RC } from "../mqtt/reason-codes.ts";

/** A provider's answer: allow, deny, or undefined = ignore (ask the next provider). */
export type AuthAnswer = { allow: true; superuser?: boolean } | { allow: false; rc?: number } | undefined;

export interface AuthProvider {
  /** The plugin name; also the hook owner and the AuthResult's `by`. */
  readonly name: string;
  authenticate(client: ClientInfo, creds: Credentials): AuthAnswer | Promise<AuthAnswer>;
}

/**
 * An enhanced method's answer to one step: undefined = not this provider's (the next one is asked);
 * `final: false` = a refusal that stands only when no later provider accepts (an unknown user).
 */
export type EnhancedAnswer = { result: EnhancedAuthResult; final: boolean } | undefined;

export interface EnhancedAuthMethod {
  /** The Authentication Method it answers (`SCRAM-SHA-256`). */
  readonly method: string;
  step(client: ClientInfo, step: EnhancedAuthStep): EnhancedAnswer | Promise<EnhancedAnswer>;
}

export const ALLOW: AuthAnswer = { allow: true };
export const IGNORE: AuthAnswer = undefined;
/** Known identity, wrong or missing password. */
export const BAD_PASSWORD: AuthAnswer = { allow: false, rc: RC.BAD_USER_NAME_OR_PASSWORD };

export class AuthChain {
  private readonly names: string[] = [];

  /** @param bypass whether clients of a zone skip the providers (`bypass_auth_plugins`). */
  constructor(
    private readonly hooks: BrokerHooks,
    private readonly bypass: (zone: string) => boolean = () => false,
  ) {}

  /** The providers in chain order (the order they were added). */
  providers(): readonly string[] {
    return this.names;
  }

  /** Appends `p` to the chain (a provider starting); adding a provider twice is an error. */
  add(p: AuthProvider): void {
    if (this.names.includes(p.name)) throw new Error(`authentication provider ${p.name} is already in the chain`);
    const decide = (a: AuthAnswer) => toFold(a, p.name);
    this.hooks.add(
      "client.authenticate",
      (client: ClientInfo, creds: Credentials, _acc: AuthResult) => {
        if (this.bypass(client.zone)) return undefined;
        const a = p.authenticate(client, creds);
        return a instanceof Promise ? a.then(decide) : decide(a);
      },
      PRIORITY.auth,
      p.name,
    );
    this.names.push(p.name);
  }

  /** Adds `owner`'s enhanced authentication method (removed with the owner by remove()). */
  addMethod(owner: string, m: EnhancedAuthMethod): void {
    const decide = (a: EnhancedAnswer) => (a === undefined ? undefined : a.final ? stop(a.result) : a.result);
    this.hooks.add(
      "client.enhanced_auth",
      (client: ClientInfo, step: EnhancedAuthStep, _acc: EnhancedAuthResult) => {
        if (step.method !== m.method || this.bypass(client.zone)) return undefined;
        const a = m.step(client, step);
        return a instanceof Promise ? a.then(decide) : decide(a);
      },
      PRIORITY.auth,
      owner,
    );
  }

  /** Takes `name` out of the chain (its plugin stopping). */
  remove(name: string): void {
    this.hooks.removeOwner(name);
    const i = this.names.indexOf(name);
    if (i >= 0) this.names.splice(i, 1);
  }
}

function toFold(a: AuthAnswer, by: string) {
  if (a === undefined) return undefined;
  if (a.allow) return stop<AuthResult>({ rc: RC.SUCCESS, superuser: a.superuser === true, by });
  return stop<AuthResult>({ rc: a.rc ?? RC.NOT_AUTHORIZED, superuser: false, by });
}
