// MQTT over TLS ("ssl" listener): a tls.Server whose verified TLSSocket is the broker's stream.
import type { Socket } from "node:net";
import { createServer, type TLSSocket } from "node:tls";
import { endpointsOf } from "./endpoints.ts";
import { identifierOf, type Listener, ServerListener, type Transport } from "./listener.ts";
import { loadTlsMaterial } from "./tls-material.ts";
import { acceptsPeer, peerCertOf, tlsServerOptions } from "./tls-options.ts";
import type { ConnectionHandler, ListenerDeps, ListenerSettings } from "./types.ts";

export function tlsTransport(settings: ListenerSettings, deps: ListenerDeps): Transport {
  return {
    async createServer(book) {
      const material = await loadTlsMaterial(settings, deps, identifierOf(settings));
      const server = createServer(tlsServerOptions(settings, material));
      server.on("secureConnection", (socket: TLSSocket) => {
        if (!acceptsPeer(socket, settings)) {
          socket.destroy();
          return;
        }
        socket.setNoDelay(settings.nodelay);
        book.admit(socket, endpointsOf(socket, server), peerCertOf(socket));
      });
      // Failed or timed-out handshakes are routine on a public port: drop them quietly.
      server.on("tlsClientError", (_err: Error, socket: Socket) => socket.destroy());
      return server;
    },
  };
}

export function createTlsListener(
  settings: ListenerSettings,
  handler: ConnectionHandler,
  deps: ListenerDeps,
): Listener {
  return new ServerListener(settings, handler, deps, tlsTransport(settings, deps));
}
