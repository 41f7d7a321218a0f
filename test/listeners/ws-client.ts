// Test-side WebSocket client helpers: open a socket and learn whether the listener accepted it.
import type { ClientOptions } from "ws";
import WebSocket from "ws";
import type { Fleet } from "./helpers.ts";

export type Outcome = { open: true; protocol: string } | { open: false; status?: number };

/** Opens a client WebSocket, owned by the fleet (terminated at cleanup). */
export function openWs(fleet: Fleet, url: string, protocols?: string | string[], options?: ClientOptions): WebSocket {
  return fleet.own(new WebSocket(url, protocols, options));
}

/** Resolves with the negotiated sub-protocol, or with the HTTP status of a refusal. */
export function outcome(ws: WebSocket): Promise<Outcome> {
  return new Promise((resolve) => {
    ws.once("open", () => resolve({ open: true, protocol: ws.protocol }));
    ws.once("error", (err: Error) => {
      const status = /Unexpected server response: (\d+)/.exec(err.message)?.[1];
      resolve(status === undefined ? { open: false } : { open: false, status: Number(status) });
    });
  });
}

/** Collects binary messages until `n` bytes arrived; resolves with the bytes and frame count. */
export function collect(ws: WebSocket, n: number): Promise<{ bytes: Buffer; frames: number; allBinary: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let allBinary = true;
    const onMessage = (data: Buffer, isBinary: boolean): void => {
      chunks.push(data);
      allBinary &&= isBinary;
      const bytes = Buffer.concat(chunks);
      if (bytes.length >= n) {
        ws.off("message", onMessage);
        resolve({ bytes, frames: chunks.length, allBinary });
      }
    };
    ws.on("message", onMessage);
  });
}
