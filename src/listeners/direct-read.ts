// Plain TCP reads without Node's per-read machinery. By default every read of a net.Socket mallocs
// a 64 KB buffer, shrinks it, wraps it in a new ArrayBuffer and pushes that through the Readable,
// which schedules a nextTick. Node's `onread` option (net.connect) instead reads into one buffer
// the caller owns and calls back with the byte count. A server offers no such option, so it is
// switched on here for an accepted socket, through the same fields the option sets. On a Node
// without them the caller keeps its 'data' listener.

import { Socket } from "node:net";

/** One read buffer for every socket: each read is copied out of it before the next one. */
const READ_BUFFER = Buffer.allocUnsafeSlow(64 * 1024);

/** Called as a method of the socket (like a 'data' listener), with a chunk of its own. */
export type ChunkHandler = (chunk: Buffer) => void;

interface UserBufferHandle {
  useUserBuffer(buffer: Uint8Array): void;
}

/** Node's private fields behind `onread`: the buffer and the callback. */
interface ReadFields {
  buffer: symbol;
  callback: symbol;
}

/** Found on the first socket: undefined until then, null when this Node has none. */
let fields: ReadFields | null | undefined;

function readFields(socket: Socket, handle: Partial<UserBufferHandle>): ReadFields | null {
  if (fields !== undefined) return fields;
  const named = new Map<string | undefined, symbol>();
  for (const s of Object.getOwnPropertySymbols(socket)) named.set(s.description, s);
  const buffer = named.get("kBuffer");
  const callback = named.get("kBufferCb");
  const usable = buffer !== undefined && callback !== undefined && typeof handle.useUserBuffer === "function";
  fields = usable ? { buffer, callback } : null;
  return fields;
}

const HANDLER = Symbol("svc.directRead");
type DirectSocket = Socket & { [HANDLER]: ChunkHandler } & Record<symbol, unknown>;

/** Node calls this as a method of the socket, with the bytes read into READ_BUFFER. */
function onRead(this: DirectSocket, nread: number, buffer: Buffer): void {
  const chunk = Buffer.allocUnsafe(nread);
  buffer.copy(chunk, 0, 0, nread);
  this[HANDLER](chunk);
}

/**
 * Switches an accepted plain TCP socket (not TLS; MQTT's, or the one under a WebSocket) to direct
 * reads: `handler` then gets every chunk and 'data' is never emitted. False, with nothing changed, when the stream is not
 * such a socket or this Node lacks the fields. pause() and resume() keep working: Node stops and
 * restarts the handle's reads for such sockets. 'end' and 'close' come as before.
 */
export function readDirect(stream: unknown, handler: ChunkHandler): boolean {
  if (!(stream instanceof Socket) || stream.constructor !== Socket) return false;
  const handle = (stream as unknown as { _handle?: Partial<UserBufferHandle> | null })._handle;
  if (handle === null || handle === undefined) return false;
  const f = readFields(stream, handle);
  if (f === null) return false;
  const s = stream as DirectSocket;
  if (s[f.buffer] !== null) return false;
  s[HANDLER] = handler;
  s[f.buffer] = READ_BUFFER;
  s[f.callback] = onRead;
  (handle as UserBufferHandle).useUserBuffer(READ_BUFFER);
  return true;
}
