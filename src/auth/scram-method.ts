// The SCRAM-SHA-256 enhanced authentication method (MQTT 5.0 section 4.12) of svc_auth_username:
// CONNECT (Authentication Method `SCRAM-SHA-256`, Authentication Data client-first) -> AUTH 0x18
// server-first -> AUTH 0x18 client-final -> CONNACK 0x00 with server-final. The same steps run
// for re-authentication (AUTH 0x19). The user's SCRAM keys are the ones its record in the store
// carries (credential-store.ts). Answers:
// - a user the provider does not know: 0x86, unless a later provider of the chain accepts;
// - a malformed message, a SCRAM user name other than the CONNECT's (the CONNECT must carry it:
//   bans, ACL rules and listings go by the CONNECT's user name), a record without SCRAM keys (set
//   before they existed: setting the password again derives them), a wrong proof: 0x86.

import type { EnhancedAuthStep } from "../broker/hookpoints.ts";
import type { ClientInfo } from "../broker/types.ts";
import { RC } from "../mqtt/reason-codes.ts";
import type { Logger } from "../telemetry/logger.ts";
import type { EnhancedAnswer, EnhancedAuthMethod } from "./chain.ts";
import { type StoredCredential, scramOf } from "./credential-store.ts";
import {
  parseClientFirst,
  SCRAM_SHA_256,
  ScramError,
  type ScramServerState,
  serverFinal,
  serverFirst,
} from "./scram.ts";

export interface ScramMethodDeps {
  /** The provider's plugin name (log lines). */
  owner: string;
  lookup(username: string): StoredCredential | undefined;
  /** Counts an outcome (the provider's success / failure / ignore metrics). */
  count(outcome: "success" | "failure" | "ignore"): void;
  logger: Logger;
}

/** What the method keeps between server-first and client-final. */
class ScramState {
  constructor(
    readonly method: ScramMethod,
    readonly server: ScramServerState,
    readonly superuser: boolean,
  ) {}
}

const BAD: EnhancedAnswer = { result: { rc: RC.BAD_USER_NAME_OR_PASSWORD }, final: true };

export class ScramMethod implements EnhancedAuthMethod {
  readonly method = SCRAM_SHA_256;

  constructor(private readonly deps: ScramMethodDeps) {}

  step(client: ClientInfo, step: EnhancedAuthStep): EnhancedAnswer {
    if (step.step === 0) return this.first(client, step.data);
    const state = step.state;
    if (!(state instanceof ScramState) || state.method !== this) return undefined;
    return this.final(client, state, step.data);
  }

  private first(client: ClientInfo, data: Buffer | undefined): EnhancedAnswer {
    let first: ReturnType<typeof parseClientFirst>;
    try {
      first = parseClientFirst(data?.toString("utf8") ?? "");
    } catch (err) {
      return this.fail(client, undefined, err);
    }
    const user = first.username;
    if (client.username !== user) {
      return this.fail(client, user, new ScramError("SCRAM user name is not the CONNECT user name"));
    }
    const entry = this.deps.lookup(user);
    if (entry === undefined) {
      this.deps.count("ignore");
      return { result: { rc: RC.BAD_USER_NAME_OR_PASSWORD }, final: false };
    }
    const cred = scramOf(entry);
    if (cred === undefined) {
      return this.fail(client, user, new ScramError("no SCRAM keys stored: set the user's password again"));
    }
    const server = serverFirst(first, cred);
    return {
      result: {
        rc: RC.CONTINUE_AUTHENTICATION,
        data: Buffer.from(server.serverFirst),
        state: new ScramState(this, server, entry.is_superuser),
      },
      final: true,
    };
  }

  private final(client: ClientInfo, state: ScramState, data: Buffer | undefined): EnhancedAnswer {
    let answer: string;
    try {
      answer = serverFinal(state.server, data?.toString("utf8") ?? "");
    } catch (err) {
      return this.fail(client, state.server.first.username, err);
    }
    this.deps.count("success");
    return { result: { rc: RC.SUCCESS, data: Buffer.from(answer), superuser: state.superuser }, final: true };
  }

  private fail(client: ClientInfo, user: string | undefined, err: unknown): EnhancedAnswer {
    this.deps.count("failure");
    const reason = err instanceof Error ? err.message : String(err);
    this.deps.logger.info(
      { plugin: this.deps.owner, clientid: client.clientId, username: user, reason },
      "SCRAM-SHA-256 authentication failed",
    );
    return BAD;
  }
}
