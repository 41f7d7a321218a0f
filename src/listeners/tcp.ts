// MQTT over plain TCP: the accepted net.Socket itself is the broker's stream (it corks/uncorks it).
import { createServer, type Socket } from "node:net";
import { endpointsOf } from "./endpoints.ts";
import { type Listener, ServerListener, type Transport } from "./listener.ts";
import type { ConnectionHandler, ListenerDeps, ListenerSettings } from "./types.ts";

export function tcpTransport(settings: ListenerSettings): Transport {
  return {
    async createServer(book) {
      const server = createServer({ noDelay: settings.nodelay });
      server.on("connection", (socket: Socket) => {
        socket.setNoDelay(settings.nodelay);
        book.admit(socket, endpointsOf(socket, server));
      });
      return server;
    },
  };
}

export function createTcpListener(
  settings: ListenerSettings,
  handler: ConnectionHandler,
  deps: ListenerDeps,
): Listener {
  return new ServerListener(settings, handler, deps, tcpTransport(settings));
}
