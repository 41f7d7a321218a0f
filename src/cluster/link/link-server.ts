// The listening side of the inter-node link: a TCP server, or a TLS one (client certificates
// required and checked against `ca` when it is given), handing each accepted socket over.

import net from "node:net";
import tls from "node:tls";
import type { Logger } from "../../telemetry/logger.ts";

export function createLinkServer(
  t: { key: Buffer; cert: Buffer; ca?: Buffer } | undefined,
  accept: (socket: net.Socket) => void,
  log: Logger,
): net.Server {
  const server = t
    ? tls.createServer({
        key: t.key,
        cert: t.cert,
        ca: t.ca,
        requestCert: t.ca !== undefined,
        rejectUnauthorized: t.ca !== undefined,
      })
    : net.createServer();
  if (t) {
    server.on("secureConnection", (s: tls.TLSSocket) => accept(s));
    server.on("tlsClientError", (err: Error, s: tls.TLSSocket) => {
      log.warn({ address: `${s.remoteAddress}:${s.remotePort}`, err: err.message }, "inter-node TLS handshake failed");
    });
  } else {
    server.on("connection", (s: net.Socket) => accept(s));
  }
  return server;
}
