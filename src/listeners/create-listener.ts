// Picks the listener implementation for a configured kind.
import type { Listener } from "./listener.ts";
import { createTcpListener } from "./tcp.ts";
import { createTlsListener } from "./tls.ts";
import type { ConnectionHandler, ListenerDeps, ListenerSettings } from "./types.ts";
import { createWsListener } from "./ws.ts";
import { createWssListener } from "./wss.ts";

export function createListener(settings: ListenerSettings, handler: ConnectionHandler, deps: ListenerDeps): Listener {
  switch (settings.kind) {
    case "tcp":
      return createTcpListener(settings, handler, deps);
    case "ssl":
      return createTlsListener(settings, handler, deps);
    case "ws":
      return createWsListener(settings, handler, deps);
    case "wss":
      return createWssListener(settings, handler, deps);
  }
}
