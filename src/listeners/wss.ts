// MQTT over secure WebSocket: the ws listener's upgrade handling on an https server, with the
// ssl listener's certificate material, peer verification and client-certificate subject.
import { createServer } from "node:https";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { identifierOf, type Listener, ServerListener, type Transport } from "./listener.ts";
import { loadTlsMaterial } from "./tls-material.ts";
import { acceptsPeer, peerCertOf, tlsServerOptions } from "./tls-options.ts";
import type { ConnectionHandler, ListenerDeps, ListenerSettings } from "./types.ts";
import { attachMqttWebSocket, httpTimeouts } from "./ws.ts";

export function wssTransport(settings: ListenerSettings, deps: ListenerDeps): Transport {
  return {
    async createServer(book) {
      const material = await loadTlsMaterial(settings, deps, identifierOf(settings));
      const server = createServer({
        ...tlsServerOptions(settings, material),
        ...httpTimeouts(settings),
      });
      server.on("secureConnection", (socket: TLSSocket) => {
        if (!acceptsPeer(socket, settings)) socket.destroy();
      });
      server.on("tlsClientError", (_err: Error, socket: Socket) => socket.destroy());
      attachMqttWebSocket(server, settings, book, (socket) => peerCertOf(socket as TLSSocket));
      return server;
    },
  };
}

export function createWssListener(
  settings: ListenerSettings,
  handler: ConnectionHandler,
  deps: ListenerDeps,
): Listener {
  return new ServerListener(settings, handler, deps, wssTransport(settings, deps));
}
