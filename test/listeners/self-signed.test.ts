// Self-signed fallback: an ssl listener without keyfile/certfile generates a certificate into
// <dataDir>/certs once, warns, and reuses the same files on the next start.
import { once } from "node:events";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { connect } from "node:tls";
import { afterEach, describe, expect, it } from "vitest";
import { createListener } from "../../src/listeners/create-listener.ts";
import { SELF_SIGNED_CERT, SELF_SIGNED_KEY } from "../../src/listeners/self-signed.ts";
import { captureLogger, Fleet, listenerSettings, recordingHandler } from "./helpers.ts";

const fleet = new Fleet();
afterEach(() => fleet.cleanup());

describe("self-signed certificate", () => {
  it("is generated once into <dataDir>/certs, served, and reused on a later start", async () => {
    const dataDir = await fleet.tempDir();
    const keyPath = join(dataDir, "certs", SELF_SIGNED_KEY);
    const certPath = join(dataDir, "certs", SELF_SIGNED_CERT);

    const logger = captureLogger();
    const rec = recordingHandler({ echo: true });
    const first = await fleet.start(createListener(listenerSettings("ssl"), rec.handler, { dataDir, logger }));
    const cert = await readFile(certPath, "utf8");
    const key = await readFile(keyPath, "utf8");
    expect(cert).toContain("BEGIN CERTIFICATE");
    expect(key).toContain("BEGIN PRIVATE KEY");
    expect((await stat(keyPath)).mode & 0o077).toBe(0);
    const warnings = logger.entries.filter((e) => e.level === "warn");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.obj).toMatchObject({
      listener: "mqtt:ssl:test",
      generated: true,
      certfile: certPath,
    });

    // The generated certificate verifies for 127.0.0.1.
    const client = fleet.own(connect({ host: "127.0.0.1", port: first.port, ca: cert }));
    await once(client, "secureConnect");
    expect(client.authorized).toBe(true);
    await rec.next();
    await first.stop();

    // A second listener on the same data dir reuses the files.
    const again = captureLogger();
    await fleet.start(
      createListener(listenerSettings("wss"), recordingHandler().handler, {
        dataDir,
        logger: again,
      }),
    );
    expect(await readFile(certPath, "utf8")).toBe(cert);
    expect(await readFile(keyPath, "utf8")).toBe(key);
    expect(again.entries.find((e) => e.level === "warn")?.obj).toMatchObject({
      listener: "mqtt:wss:test",
      generated: false,
    });
  });

  it("is generated only once when two listeners start together", async () => {
    const dataDir = await fleet.tempDir();
    const deps = { dataDir, logger: captureLogger() };
    const listeners = await Promise.all([
      fleet.start(createListener(listenerSettings("ssl", { name: "a" }), recordingHandler().handler, deps)),
      fleet.start(createListener(listenerSettings("ssl", { name: "b" }), recordingHandler().handler, deps)),
    ]);
    const cert = await readFile(join(dataDir, "certs", SELF_SIGNED_CERT), "utf8");
    // Both serve the very certificate on disk.
    for (const listener of listeners) {
      const client = fleet.own(connect({ host: "127.0.0.1", port: listener.port, ca: cert }));
      await once(client, "secureConnect");
      expect(client.authorized).toBe(true);
    }
  });
});
