// svc_psk_file: TLS-PSK on the ssl listener (spec section 5: verified during the handshake,
// outside the authentication chain). A Node TLS client with `pskCallback` completes the handshake
// with a known identity and key and then speaks MQTT; an unknown identity, a wrong key, or the
// plugin unloaded fail the handshake; certificate clients still connect; a bad PSK file stops the
// load with file:line; psk_ciphers with ciphers stops the start.

import { type TLSSocket, connect as tlsConnect } from "node:tls";
import mqttPacket, { type IConnackPacket } from "mqtt-packet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parsePskText } from "../../src/auth/psk-file.ts";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { useTempDir } from "./helpers.ts";

const PSK_CIPHERS = "PSK-AES128-GCM-SHA256,PSK-AES256-GCM-SHA384";

function pskClient(port: number, identity: string, key: string): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({
      host: "127.0.0.1",
      port,
      ciphers: PSK_CIPHERS.replaceAll(",", ":"),
      maxVersion: "TLSv1.2",
      checkServerIdentity: () => undefined,
      pskCallback: () => ({ identity, psk: Buffer.from(key) }),
    });
    s.once("secureConnect", () => resolve(s));
    s.once("error", reject);
    s.once("close", () => reject(new Error("closed during the handshake")));
  });
}

/** CONNECT over an established socket; the CONNACK. */
function mqttConnect(s: TLSSocket, clientId: string): Promise<IConnackPacket> {
  return new Promise((resolve, reject) => {
    const parser = mqttPacket.parser({ protocolVersion: 4 });
    parser.on("packet", (p) => (p.cmd === "connack" ? resolve(p as IConnackPacket) : undefined));
    s.on("data", (b: Buffer) => parser.parse(b));
    s.once("error", reject);
    s.write(
      mqttPacket.generate({
        cmd: "connect",
        protocolId: "MQTT",
        protocolVersion: 4,
        clean: true,
        keepalive: 0,
        clientId,
      }),
    );
  });
}

describe("svc_psk_file", () => {
  const files = useTempDir();
  const pskFile = files.write("psk.txt", "# identities\nclient1:secretkey1234\n\nclient2:a:b:c\n");
  let node: TestNode;
  beforeAll(async () => {
    node = await startTestNode({
      set: {
        "listener.ssl.external": "127.0.0.1:0",
        "listener.ssl.external.psk_ciphers": PSK_CIPHERS,
        "psk.file.path": pskFile,
      },
    });
  });
  afterAll(async () => node?.close());

  it("refuses PSK handshakes while the plugin is not loaded", async () => {
    await expect(pskClient(node.port("ssl"), "client1", "secretkey1234")).rejects.toThrow();
  });

  it("a known identity with its key completes the handshake and speaks MQTT", async () => {
    await node.plugins.load("svc_psk_file");
    try {
      const s = await pskClient(node.port("ssl"), "client1", "secretkey1234");
      expect(s.getCipher().name).toMatch(/^PSK-/);
      expect((await mqttConnect(s, "psk-client")).returnCode).toBe(0);
      s.destroy();
      // The key is everything after the first delimiter.
      const s2 = await pskClient(node.port("ssl"), "client2", "a:b:c");
      s2.destroy();
      await expect(pskClient(node.port("ssl"), "client1", "wrong-key")).rejects.toThrow();
      await expect(pskClient(node.port("ssl"), "nobody", "secretkey1234")).rejects.toThrow();
    } finally {
      await node.plugins.unload("svc_psk_file");
    }
    await expect(pskClient(node.port("ssl"), "client1", "secretkey1234")).rejects.toThrow();
  });

  it("certificate clients still connect to the same listener", async () => {
    const s = await new Promise<TLSSocket>((resolve, reject) => {
      const c = tlsConnect({ host: "127.0.0.1", port: node.port("ssl"), rejectUnauthorized: false });
      c.once("secureConnect", () => resolve(c));
      c.once("error", reject);
    });
    expect((await mqttConnect(s, "cert-client")).returnCode).toBe(0);
    s.destroy();
  });

  it("a bad line stops the load with file:line; reloading reads the file again", async () => {
    files.write("psk.txt", "client1:secretkey1234\nno-delimiter\n:nokeyid\n");
    await expect(node.plugins.load("svc_psk_file")).rejects.toThrow(`${pskFile}:2: expected identity:key`);
    expect(node.plugins.isActive("svc_psk_file")).toBe(false);
    files.write("psk.txt", "client3:k3\n");
    await node.plugins.load("svc_psk_file");
    try {
      (await pskClient(node.port("ssl"), "client3", "k3")).destroy();
      await expect(pskClient(node.port("ssl"), "client1", "secretkey1234")).rejects.toThrow();
    } finally {
      await node.plugins.unload("svc_psk_file");
    }
  });
});

describe("PSK configuration", () => {
  it("parses identity:key lines with the configured delimiter", () => {
    const keys = parsePskText("a=1\n# c\nb=x=y\r\n", "p.txt", "=");
    expect([...keys].map(([k, v]) => [k, v.toString()])).toEqual([
      ["a", "1"],
      ["b", "x=y"],
    ]);
    expect(() => parsePskText(`${"i".repeat(129)}:k`, "p.txt", ":")).toThrow("p.txt:1: identity longer than 128 bytes");
    expect(() => parsePskText("id:", "p.txt", ":")).toThrow("p.txt:1: the key must be 1..256 bytes");
  });

  it("psk_ciphers and ciphers cannot both be set", async () => {
    await expect(
      startTestNode({
        set: {
          "listener.ssl.external": "127.0.0.1:0",
          "listener.ssl.external.psk_ciphers": PSK_CIPHERS,
          "listener.ssl.external.ciphers": "ECDHE-RSA-AES128-GCM-SHA256",
        },
      }),
    ).rejects.toThrow("listener.ssl.external: psk_ciphers and ciphers cannot both be set");
  });
});
