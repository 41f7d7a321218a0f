// The chain's mechanics on the broker's hook registry, with providers written here: start order,
// ignore-to-next (synchronous and asynchronous answers), allow with the superuser flag, deny codes,
// removal, zones that bypass the providers, and a crashing provider failing closed.

import { describe, expect, it } from "vitest";
import { type AuthAnswer, AuthChain, type AuthProvider } from "../../src/auth/chain.ts";
import type { AuthResult, HookPoints } from "../../src/broker/hookpoints.ts";
import type { ClientInfo } from "../../src/broker/types.ts";
import { Hooks, stop } from "../../src/hooks/hooks.ts";
import { PRIORITY } from "../../src/hooks/priorities.ts";
import { clientInfo } from "../helpers/client-info.ts";

const client = (clientId: string, zone = "external"): ClientInfo => clientInfo({ clientId, zone });
const creds = { username: undefined, password: undefined, authMethod: undefined, authData: undefined };
const ANON: AuthResult = { rc: 0, superuser: false, by: "anonymous" };
const DENIED: AuthResult = { rc: 0x87, superuser: false, by: "error" };

/** A provider deciding by client id: `answers[id]`, asynchronously when `async`. */
function provider(name: string, answers: Record<string, AuthAnswer>, log: string[], async = false): AuthProvider {
  return {
    name,
    authenticate(c) {
      log.push(name);
      const a = answers[c.clientId];
      return async ? new Promise((r) => setTimeout(() => r(a), 1)) : a;
    },
  };
}

function setup(bypass: (zone: string) => boolean = () => false) {
  const hooks = new Hooks<HookPoints>({ error: () => undefined });
  const chain = new AuthChain(hooks, bypass);
  const run = (id: string, zone?: string) =>
    hooks.fold("client.authenticate", [client(id, zone), creds], ANON, DENIED) as AuthResult | Promise<AuthResult>;
  return { hooks, chain, run };
}

describe("AuthChain", () => {
  it("asks providers in the order they were added; the first that decides wins", async () => {
    const { chain, run } = setup();
    const log: string[] = [];
    chain.add(provider("a", { x: { allow: false, rc: 0x86 } }, log));
    chain.add(provider("b", { x: { allow: true }, y: { allow: true, superuser: true } }, log, true));
    chain.add(provider("c", { z: { allow: false } }, log));
    expect(chain.providers()).toEqual(["a", "b", "c"]);
    expect(await run("x")).toEqual({ rc: 0x86, superuser: false, by: "a" });
    expect(log).toEqual(["a"]);
    log.length = 0;
    expect(await run("y")).toEqual({ rc: 0, superuser: true, by: "b" });
    expect(log).toEqual(["a", "b"]);
    log.length = 0;
    expect(await run("z")).toEqual({ rc: 0x87, superuser: false, by: "c" });
    log.length = 0;
    // Nobody decides: the start value (allow_anonymous) stands.
    expect(await run("nobody")).toEqual(ANON);
    expect(log).toEqual(["a", "b", "c"]);
  });

  it("stays synchronous while every provider is", () => {
    const { chain, run } = setup();
    chain.add(provider("a", {}, []));
    chain.add(provider("b", { s: { allow: true } }, []));
    expect(run("s")).toEqual({ rc: 0, superuser: false, by: "b" });
  });

  it("a removed provider is no longer asked; added again, it is last", async () => {
    const { chain, run } = setup();
    const log: string[] = [];
    chain.add(provider("a", { x: { allow: false } }, log));
    chain.add(provider("b", { x: { allow: true } }, log));
    chain.remove("a");
    expect(await run("x")).toMatchObject({ rc: 0, by: "b" });
    chain.add(provider("a", { x: { allow: false } }, log));
    expect(chain.providers()).toEqual(["b", "a"]);
    expect(() => chain.add(provider("a", {}, log))).toThrow(/already in the chain/);
  });

  it("runs after bans (a higher priority) and skips zones that bypass the providers", async () => {
    const { hooks, chain, run } = setup((zone) => zone === "internal");
    chain.add(provider("a", { x: { allow: false, rc: 0x86 } }, []));
    expect(await run("x", "internal")).toEqual(ANON);
    hooks.add(
      "client.authenticate",
      () => stop<AuthResult>({ rc: 0x8a, superuser: false, by: "banned" }),
      PRIORITY.banned,
      "ban",
    );
    expect(await run("x")).toMatchObject({ rc: 0x8a });
  });

  it("a provider that throws or rejects fails closed", async () => {
    const { chain, run } = setup();
    chain.add({
      name: "boom",
      authenticate(c) {
        if (c.clientId === "sync") throw new Error("boom");
        return Promise.reject(new Error("later"));
      },
    });
    chain.add(provider("b", { sync: { allow: true }, async: { allow: true } }, []));
    expect(await run("sync")).toEqual(DENIED);
    expect(await run("async")).toEqual(DENIED);
  });
});
