// MQTT 5.0 enhanced authentication with SCRAM-SHA-256 (svc_auth_username): the RFC 7677 test
// vector for the math, then real MQTT.js clients over real sockets doing CONNECT -> AUTH 0x18 ->
// AUTH 0x18 -> CONNACK with a SCRAM client written here (its own node:crypto code, not the
// server's): success with the server signature checked, wrong password, unknown user, unknown
// method (0x8C), superuser, preloaded and API-managed users, plain CONNECT with the same user,
// re-authentication (AUTH 0x19) on a raw connection, and a ban refusing the exchange.

import { createHash, createHmac, pbkdf2Sync, randomBytes } from "node:crypto";
import mqtt, { type IConnackPacket, type MqttClient } from "mqtt";
import type { IAuthPacket } from "mqtt-packet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deriveScramSync, parseClientFirst, SCRAM_SHA_256, serverFinal, serverFirst } from "../../src/auth/scram.ts";
import { connackCode, metric, Raw, uid, useNode, useTempDir, waitUntil } from "./helpers.ts";

/** The client side of SCRAM-SHA-256, written independently of the server code. */
class ScramClient {
  readonly nonce: string;
  private bare = "";
  private authMessage = "";
  private salted: Buffer = Buffer.alloc(0);

  constructor(
    private readonly user: string,
    private readonly password: string,
    nonce?: string,
  ) {
    this.nonce = nonce ?? randomBytes(18).toString("base64");
  }

  first(): string {
    this.bare = `n=${this.user.replace(/=/g, "=3D").replace(/,/g, "=2C")},r=${this.nonce}`;
    return `n,,${this.bare}`;
  }

  final(serverFirstMsg: string): string {
    const a = Object.fromEntries(serverFirstMsg.split(",").map((kv) => [kv[0], kv.slice(2)]));
    if (!a.r.startsWith(this.nonce)) throw new Error("server nonce does not extend the client's");
    this.salted = pbkdf2Sync(this.password, Buffer.from(a.s, "base64"), Number(a.i), 32, "sha256");
    const clientKey = createHmac("sha256", this.salted).update("Client Key").digest();
    const storedKey = createHash("sha256").update(clientKey).digest();
    const withoutProof = `c=biws,r=${a.r}`;
    this.authMessage = `${this.bare},${serverFirstMsg},${withoutProof}`;
    const sig = createHmac("sha256", storedKey).update(this.authMessage).digest();
    const proof = Buffer.from(clientKey.map((b, i) => b ^ sig[i]));
    return `${withoutProof},p=${proof.toString("base64")}`;
  }

  /** Whether the server-final carries the right ServerSignature. */
  verify(serverFinalMsg: string): boolean {
    const serverKey = createHmac("sha256", this.salted).update("Server Key").digest();
    const sig = createHmac("sha256", serverKey).update(this.authMessage).digest();
    return serverFinalMsg === `v=${sig.toString("base64")}`;
  }
}

describe("SCRAM-SHA-256 math", () => {
  // RFC 7677 section 3.
  const client = {
    first: "n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
    final: "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
  };
  const server = {
    first: "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
    final: "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
  };

  it("the server side reproduces RFC 7677's exchange", () => {
    const cred = deriveScramSync("pencil", 4096, Buffer.from("W22ZaJ0SNY7soEsUEjb6gQ==", "base64"));
    const state = serverFirst(parseClientFirst(client.first), cred, "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0");
    expect(state.serverFirst).toBe(server.first);
    expect(serverFinal(state, client.final)).toBe(server.final);
    expect(() => serverFinal(state, client.final.replace("p=dH", "p=eH"))).toThrow("invalid-proof");
    expect(() => serverFinal(state, client.final.replace("%hv", "%hw"))).toThrow("invalid-proof");
  });

  it("the test's client reproduces RFC 7677's exchange", () => {
    const c = new ScramClient("user", "pencil", "rOprNGfwEbeRWgbNEkqO");
    expect(c.first()).toBe(client.first);
    expect(c.final(server.first)).toBe(client.final);
    expect(c.verify(server.final)).toBe(true);
  });

  it("refuses channel binding, bad encodings and another authorization identity", () => {
    expect(() => parseClientFirst("p=tls-unique,,n=user,r=abc")).toThrow("channel-bindings-not-supported");
    expect(() => parseClientFirst("n,,n=us=er,r=abc")).toThrow("invalid-username-encoding");
    expect(() => parseClientFirst("n,a=other,n=user,r=abc")).toThrow();
    expect(() => parseClientFirst("garbage")).toThrow();
    expect(parseClientFirst("y,a=a=2Cb,n=a=2Cb,r=x").username).toBe("a,b");
  });
});

const files = useTempDir();
// Only superusers may publish: a non-superuser's publish gets PUBACK 0x87.
const aclFile = files.write("acl.conf", "{deny, all}.\n");
const node = useNode({
  allow_anonymous: "false",
  acl_nomatch: "deny",
  acl_file: aclFile,
  "plugins.etc_dir": files.dir,
});

interface ScramOutcome {
  client: MqttClient;
  connack: IConnackPacket;
  auths: number;
}

/** A real MQTT.js client doing the exchange; rejects with the CONNACK error. */
function scramConnect(
  user: string,
  password: string,
  method = SCRAM_SHA_256,
  /** The CONNECT's user name (null: none). */
  username: string | null = user,
): Promise<ScramOutcome> {
  const s = new ScramClient(user, password);
  const c = mqtt.connect(node().url, {
    protocolVersion: 5,
    clientId: uid(),
    username: username ?? undefined,
    reconnectPeriod: 0,
    connectTimeout: 5000,
    properties: { authenticationMethod: method, authenticationData: Buffer.from(s.first()) },
  });
  let auths = 0;
  c.handleAuth = (packet: IAuthPacket, cb) => {
    auths++;
    try {
      const data = s.final(packet.properties?.authenticationData?.toString() ?? "");
      cb(undefined, {
        cmd: "auth",
        reasonCode: 0x18,
        properties: { authenticationMethod: method, authenticationData: Buffer.from(data) },
      });
    } catch (err) {
      cb(err as Error);
    }
  };
  return new Promise((resolve, reject) => {
    c.once("connect", (connack) => {
      const fin = connack.properties?.authenticationData?.toString() ?? "";
      if (!s.verify(fin)) reject(new Error(`bad server signature: ${fin}`));
      else resolve({ client: c, connack, auths });
    });
    c.once("error", (err) => {
      c.end(true);
      reject(err);
    });
  });
}

describe("SCRAM-SHA-256 enhanced authentication", () => {
  const opened: MqttClient[] = [];
  beforeAll(async () => {
    const n = node();
    files.write("svc_auth_username.conf", "auth.user.1.username = pre-user\nauth.user.1.password = pre-pw\n");
    await n.plugins.load("svc_auth_username");
    await n.services.authUsername.add({ id: "scram-user", password: "pencil" });
    await n.services.authUsername.add({ id: "scram-admin", password: "root-pw", is_superuser: true });
    await n.services.authUsername.add({ id: "co,mma=user", password: "x" });
  });
  afterAll(async () => {
    await Promise.all(opened.map((c) => c.endAsync(true).catch(() => undefined)));
  });

  it("succeeds: AUTH 0x18 once, CONNACK 0x00 with a server signature the client verifies", async () => {
    const before = metric(node(), "auth.username.success");
    const r = await scramConnect("scram-user", "pencil");
    opened.push(r.client);
    expect(r.auths).toBe(1);
    expect(r.connack.reasonCode).toBe(0);
    expect(r.connack.properties?.authenticationMethod).toBe(SCRAM_SHA_256);
    expect(metric(node(), "auth.username.success")).toBe(before + 1);
    // Not a superuser: the ACL refuses the publish.
    await expect(r.client.publishAsync("t/1", "x", { qos: 1 })).rejects.toMatchObject({ code: 0x87 });
    // The user name is escaped in the SCRAM message (`=2C`, `=3D`).
    const odd = await scramConnect("co,mma=user", "x");
    opened.push(odd.client);
  });

  it("a user preloaded from the plugin's file has SCRAM keys too", async () => {
    const r = await scramConnect("pre-user", "pre-pw");
    opened.push(r.client);
  });

  it("a superuser skips the ACL", async () => {
    const r = await scramConnect("scram-admin", "root-pw");
    opened.push(r.client);
    await r.client.publishAsync("t/1", "x", { qos: 1 });
  });

  it("wrong password and unknown user: CONNACK 0x86", async () => {
    await expect(scramConnect("scram-user", "wrong")).rejects.toMatchObject({ code: 0x86 });
    await expect(scramConnect("nobody", "pencil")).rejects.toMatchObject({ code: 0x86 });
  });

  it("the CONNECT must carry the SCRAM user name: absent or another one, CONNACK 0x86", async () => {
    await expect(scramConnect("scram-user", "pencil", SCRAM_SHA_256, null)).rejects.toMatchObject({ code: 0x86 });
    await expect(scramConnect("scram-user", "pencil", SCRAM_SHA_256, "scram-admin")).rejects.toMatchObject({
      code: 0x86,
    });
  });

  it("an unknown method: CONNACK 0x8C", async () => {
    await expect(scramConnect("scram-user", "pencil", "SCRAM-SHA-1")).rejects.toMatchObject({ code: 0x8c });
  });

  it("the same user logs in with a plain CONNECT password too", async () => {
    expect(await connackCode(node(), 5, { clientId: uid(), username: "scram-user", password: "pencil" })).toBe(0);
    expect(await connackCode(node(), 5, { clientId: uid(), username: "scram-user", password: "bad" })).toBe(0x86);
  });

  it("a changed password applies to SCRAM at once", async () => {
    await node().services.authUsername.add({ id: "scram-change", password: "old" });
    await node().services.authUsername.update("scram-change", "new");
    await expect(scramConnect("scram-change", "old")).rejects.toMatchObject({ code: 0x86 });
    const r = await scramConnect("scram-change", "new");
    opened.push(r.client);
  });

  it("re-authentication with AUTH 0x19; a wrong proof then ends the connection", async () => {
    const s1 = new ScramClient("scram-user", "pencil");
    const props = (data: string) => ({ authenticationMethod: SCRAM_SHA_256, authenticationData: Buffer.from(data) });
    const raw = await Raw.open(node(), 5);
    raw.send({
      cmd: "connect",
      protocolId: "MQTT",
      protocolVersion: 5,
      clean: true,
      keepalive: 0,
      clientId: uid("r"),
      username: "scram-user",
      properties: props(s1.first()),
    });
    const a1 = (await raw.next("auth")) as IAuthPacket;
    expect(a1.reasonCode).toBe(0x18);
    raw.send({ cmd: "auth", reasonCode: 0x18, properties: props(s1.final(`${a1.properties?.authenticationData}`)) });
    const ack = (await raw.next("connack")) as IConnackPacket;
    expect(ack.reasonCode).toBe(0);
    expect(s1.verify(`${ack.properties?.authenticationData}`)).toBe(true);

    const s2 = new ScramClient("scram-user", "pencil");
    raw.send({ cmd: "auth", reasonCode: 0x19, properties: props(s2.first()) });
    const a2 = (await raw.next("auth")) as IAuthPacket;
    expect(a2.reasonCode).toBe(0x18);
    raw.send({ cmd: "auth", reasonCode: 0x18, properties: props(s2.final(`${a2.properties?.authenticationData}`)) });
    const done = (await raw.next("auth")) as IAuthPacket;
    expect(done.reasonCode).toBe(0);
    expect(s2.verify(`${done.properties?.authenticationData}`)).toBe(true);

    const s3 = new ScramClient("scram-user", "not-pencil");
    raw.send({ cmd: "auth", reasonCode: 0x19, properties: props(s3.first()) });
    const a3 = (await raw.next("auth")) as IAuthPacket;
    raw.send({ cmd: "auth", reasonCode: 0x18, properties: props(s3.final(`${a3.properties?.authenticationData}`)) });
    // 0x86 is not a DISCONNECT reason code: 0x87 not authorized.
    const disc = await raw.disconnected();
    expect(disc.reasonCode).toBe(0x87);
  });

  it("a banned user name is refused before the exchange (0x8A)", async () => {
    const n = node();
    const r = await Raw.open(n, 5);
    await n.services.banned.create({ who: "scram-banned", as: "username", reason: "test" });
    await waitUntil(() => n.services.banned.list().some((b) => b.who === "scram-banned"), "ban mirrored");
    try {
      const ack = await r.sendConnect({
        username: "scram-banned",
        properties: {
          authenticationMethod: SCRAM_SHA_256,
          authenticationData: Buffer.from(new ScramClient("scram-banned", "x").first()),
        },
      });
      expect(ack.reasonCode).toBe(0x8a);
    } finally {
      await n.services.banned.delete("username", "scram-banned");
    }
  });
});
