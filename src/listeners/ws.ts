// MQTT over WebSocket: an HTTP server upgrading requests on mqtt_path (sub-protocol "mqtt",
// "mqttv3.1" or "mqttv3.1.1") and handing the broker a byte stream over binary frames. The stream
// ignores frame boundaries: a packet may span frames and a frame may carry several packets.
import { createServer, type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import type { ConnectionBook } from "./connection-book.ts";
import { endpointsOf } from "./endpoints.ts";
import { type Listener, ServerListener, type Transport } from "./listener.ts";
import type { ConnectionHandler, ListenerDeps, ListenerSettings, PeerCert } from "./types.ts";
import { WebSocketStream } from "./ws-stream.ts";

export const MQTT_SUBPROTOCOLS: readonly string[] = ["mqtt", "mqttv3.1", "mqttv3.1.1"];

/** First offered sub-protocol that is MQTT; undefined when none is. */
export function pickSubprotocol(offered: Iterable<string>): string | undefined {
  for (const p of offered) if (MQTT_SUBPROTOCOLS.includes(p)) return p;
  return undefined;
}

function offeredSubprotocols(req: IncomingMessage): string[] {
  const header = req.headers["sec-websocket-protocol"];
  if (header === undefined) return [];
  return header
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "");
}

/** The request path; "" for a target URL cannot parse (it must not throw in an event handler). */
function pathOf(url: string | undefined): string {
  try {
    return new URL(url ?? "/", "http://listener").pathname;
  } catch {
    return "";
  }
}

function refuse(socket: Duplex, status: number): void {
  socket.once("finish", () => socket.destroy());
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/** How a (secure) server tells who the peer is beyond its address. */
export type PeerCertReader = (socket: Socket) => PeerCert | undefined;

/** Serves MQTT WebSocket upgrades on `server`; everything else gets 404 (426 on mqtt_path). */
export function attachMqttWebSocket(
  server: Server,
  settings: ListenerSettings,
  book: ConnectionBook,
  peerCertOf?: PeerCertReader,
): void {
  const wss = new WebSocketServer({
    noServer: true,
    clientTracking: false,
    perMessageDeflate: false,
    handleProtocols: (protocols) => pickSubprotocol(protocols) ?? false,
  });
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(pathOf(req.url) === settings.mqttPath ? 426 : 404, { Connection: "close" }).end();
  });
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => {});
    if (pathOf(req.url) !== settings.mqttPath) return refuse(socket, 404);
    const offered = offeredSubprotocols(req);
    // Offering only non-MQTT sub-protocols is refused, as the reference broker does.
    if (offered.length > 0 && pickSubprotocol(offered) === undefined) return refuse(socket, 400);
    const endpoints = endpointsOf(req.socket, server);
    if (endpoints === undefined) return void socket.destroy();
    const ticket = book.reserve();
    if (ticket === undefined) return refuse(socket, 503);
    socket.once("close", () => ticket.cancel());
    const peerCert = peerCertOf?.(req.socket);
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.binaryType = "nodebuffer";
      ticket.hand(new WebSocketStream(ws), endpoints, peerCert);
    });
  });
}

export function httpTimeouts(settings: ListenerSettings): {
  headersTimeout?: number;
  requestTimeout?: number;
} {
  // The upgrade request must arrive within the handshake timeout.
  return settings.handshakeTimeout > 0
    ? { headersTimeout: settings.handshakeTimeout, requestTimeout: settings.handshakeTimeout }
    : {};
}

export function wsTransport(settings: ListenerSettings): Transport {
  return {
    async createServer(book) {
      const server = createServer(httpTimeouts(settings));
      attachMqttWebSocket(server, settings, book);
      return server;
    },
  };
}

export function createWsListener(settings: ListenerSettings, handler: ConnectionHandler, deps: ListenerDeps): Listener {
  return new ServerListener(settings, handler, deps, wsTransport(settings));
}
