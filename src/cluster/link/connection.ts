// One socket between two nodes: frame splitting, the handshake state machine (HELLO, CHALLENGE,
// AUTH, WELCOME or REFUSE, see protocol.ts), keepalive bookkeeping (PING is answered here) and a
// single, idempotent close that tells the owner why. Which connection of a pair is kept, what
// the frames after the handshake mean, and when to ping or give up are the owner's (NodeLink).

import type { Socket } from "node:net";
import { bytesRead } from "../../broker/connection/read-pacing.ts";
import { LinkError, type LinkErrorCode } from "./errors.ts";
import { FrameReader } from "./frame-reader.ts";
import { newNonce, type ProofInput, proof, verifyProof } from "./handshake.ts";
import {
  decodeAuth,
  decodeChallenge,
  decodeHello,
  decodeRefuse,
  encodeAuth,
  encodeChallenge,
  encodeHello,
  encodeRefuse,
  encodeWelcome,
  Kind,
  MAX_FRAME,
  MAX_HANDSHAKE_FRAME,
  PONG,
  PROTOCOL_VERSION,
  type RefuseReason,
} from "./protocol.ts";
import { BufReader, WireError } from "./wire.ts";

export interface ConnectionOwner {
  readonly nodeName: string;
  readonly cookie: string;
  /** Acceptor side, once the dialer proved the cookie: null to accept, or why to refuse. */
  admit(conn: Connection): { reason: RefuseReason; detail: string } | null;
  /** The handshake completed (both roles). */
  established(conn: Connection): void;
  /** A frame after the handshake (PING/PONG excluded). May throw WireError: the link closes. */
  frame(conn: Connection, kind: number, body: BufReader): void;
  /** The socket can take more writes. */
  drained(conn: Connection): void;
  /** Called once, when the connection closes for any reason. */
  closed(conn: Connection, err: LinkError): void;
}

type Step = "hello" | "challenge" | "auth" | "welcome" | "open" | "closed";

const REFUSE_CODES: Record<RefuseReason, LinkErrorCode> = {
  version_mismatch: "version_mismatch",
  cookie_mismatch: "cookie_mismatch",
  node_mismatch: "node_mismatch",
  duplicate: "unreachable",
  protocol_error: "protocol_error",
};

export class Connection {
  /** The peer's node name: known from the start when dialing, after HELLO when accepting. */
  remote: string;
  private step: Step;
  private readonly reader = new FrameReader(MAX_HANDSHAKE_FRAME);
  private readonly nonce = newNonce();
  private peerNonce: Buffer = Buffer.alloc(0);
  readonly startedAt = Date.now();
  lastRecv = Date.now();
  lastSent = Date.now();
  bytesIn = 0;
  bytesOut = 0;
  /** When a liveness probe was sent (0: none pending); see NodeLink.admit. */
  probeSince = 0;
  /** Closed because another connection of the pair won (not an error worth reporting). */
  superseded = false;
  /** How the connection ended, once it has. */
  error: LinkError | null = null;
  /** Resolves when the socket is fully closed. */
  readonly done: Promise<void>;

  constructor(
    readonly socket: Socket,
    readonly role: "dialer" | "acceptor",
    private readonly owner: ConnectionOwner,
    /** "host:port" of the other end, for logs. */
    readonly address: string,
    /** Dialer: the node expected at the address. */
    expected = "",
    /** Dialer: the socket event after which HELLO may be sent. */
    readyEvent: "connect" | "secureConnect" = "connect",
  ) {
    this.remote = expected;
    this.step = role === "dialer" ? "challenge" : "hello";
    this.done = new Promise((resolve) => socket.once("close", () => resolve()));
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    socket.on("error", (err: Error) => this.fail("unreachable", `${this.describe()}: ${err.message}`));
    socket.on("close", () => this.fail("unreachable", `${this.describe()}: connection closed`));
    socket.on("drain", () => {
      if (this.step === "open") owner.drained(this);
    });
    if (role === "dialer") {
      socket.once(readyEvent, () => {
        this.send(encodeHello({ version: PROTOCOL_VERSION, nonce: this.nonce, node: owner.nodeName }));
      });
    }
  }

  get open(): boolean {
    return this.step === "open";
  }

  get closed(): boolean {
    return this.step === "closed";
  }

  /** Writes a whole frame; false when the socket's buffer is full (wait for drained). */
  send(frame: Buffer): boolean {
    if (this.step === "closed") return false;
    this.lastSent = Date.now();
    this.bytesOut += frame.length;
    return this.socket.write(frame);
  }

  /** Closes now with `code`; the owner hears of it once. Idempotent. */
  fail(code: LinkErrorCode, message: string): void {
    this.finish(new LinkError(code, message));
    this.socket.destroy();
  }

  /** Sends REFUSE, then closes (the peer reads why before the end of the stream). */
  refuse(reason: RefuseReason, detail: string, code: LinkErrorCode, message: string): void {
    if (this.step === "closed") return;
    this.send(encodeRefuse(reason, detail));
    this.finish(new LinkError(code, message));
    this.socket.end();
    // A peer that does not close its side is cut off shortly.
    const t = setTimeout(() => this.socket.destroy(), 2000);
    this.socket.once("close", () => clearTimeout(t));
  }

  private finish(err: LinkError): void {
    if (this.step === "closed") return;
    this.step = "closed";
    this.error = err;
    this.owner.closed(this, err);
  }

  describe(): string {
    return `${this.remote || "unknown node"} at ${this.address}`;
  }

  private onData(chunk: Buffer): void {
    if (this.step === "closed") return;
    this.lastRecv = Date.now();
    this.bytesIn += chunk.length;
    bytesRead(chunk.length);
    try {
      this.reader.push(chunk, (frame) => this.onFrame(frame));
    } catch (err) {
      const e = err as Error;
      if (e instanceof WireError || e instanceof RangeError) {
        if (this.step === "open") this.fail("protocol_error", `bad frame from ${this.describe()}: ${e.message}`);
        else
          this.refuse(
            "protocol_error",
            e.message,
            "protocol_error",
            `bad handshake from ${this.describe()}: ${e.message}`,
          );
      } else {
        this.fail("protocol_error", `error handling a frame from ${this.describe()}: ${e.message}`);
      }
    }
  }

  /** One frame; false stops the reader (the connection closed). */
  private onFrame(frame: Buffer): boolean {
    const kind = frame[0];
    const body = new BufReader(frame, 1);
    if (this.step === "open") {
      if (kind === Kind.ping) this.send(PONG);
      else if (kind !== Kind.pong) this.owner.frame(this, kind, body);
    } else if (kind === Kind.refuse) {
      const { reason, detail } = decodeRefuse(body);
      const code = REFUSE_CODES[reason];
      if (reason === "duplicate") this.superseded = true;
      this.fail(
        code,
        `${this.describe()} refused the link: ${reason.replace("_", " ")}${detail ? ` (${detail})` : ""}`,
      );
    } else if (this.step === "hello" && kind === Kind.hello) this.onHello(body);
    else if (this.step === "challenge" && kind === Kind.challenge) this.onChallenge(body);
    else if (this.step === "auth" && kind === Kind.auth) this.onAuth(body);
    else if (this.step === "welcome" && kind === Kind.welcome) {
      this.becomeOpen();
    } else {
      throw new WireError(`unexpected frame kind 0x${kind.toString(16)} during the handshake (${this.step})`);
    }
    return this.step !== "closed";
  }

  private proofInput(): ProofInput {
    const dialer = this.role === "dialer" ? this.owner.nodeName : this.remote;
    const acceptor = this.role === "dialer" ? this.remote : this.owner.nodeName;
    const dialerNonce = this.role === "dialer" ? this.nonce : this.peerNonce;
    const acceptorNonce = this.role === "dialer" ? this.peerNonce : this.nonce;
    return { version: PROTOCOL_VERSION, dialer, acceptor, dialerNonce, acceptorNonce };
  }

  private onHello(body: BufReader): void {
    const h = decodeHello(body);
    if (h.version !== PROTOCOL_VERSION) {
      this.refuse(
        "version_mismatch",
        `this node speaks inter-node protocol version ${PROTOCOL_VERSION}`,
        "version_mismatch",
        `refused the link from ${this.address}: it speaks protocol version ${h.version}, this node ${PROTOCOL_VERSION}`,
      );
      return;
    }
    if (h.node.length === 0) throw new WireError("empty node name");
    this.remote = h.node;
    if (h.node === this.owner.nodeName) {
      this.refuse(
        "node_mismatch",
        "same node name",
        "node_mismatch",
        `refused a link from ${this.address} with this node's own name`,
      );
      return;
    }
    this.peerNonce = h.nonce;
    const mac = proof(this.owner.cookie, "acceptor", this.proofInput());
    this.step = "auth";
    this.send(encodeChallenge({ version: PROTOCOL_VERSION, nonce: this.nonce, node: this.owner.nodeName, mac }));
  }

  private onChallenge(body: BufReader): void {
    const c = decodeChallenge(body);
    if (c.version !== PROTOCOL_VERSION) {
      this.refuse(
        "version_mismatch",
        `this node speaks inter-node protocol version ${PROTOCOL_VERSION}`,
        "version_mismatch",
        `${this.describe()} speaks protocol version ${c.version}, this node ${PROTOCOL_VERSION}`,
      );
      return;
    }
    const expected = this.remote;
    this.remote = c.node;
    this.peerNonce = c.nonce;
    if (!verifyProof(this.owner.cookie, "acceptor", this.proofInput(), c.mac)) {
      this.remote = expected;
      this.refuse(
        "cookie_mismatch",
        "the cookies differ",
        "cookie_mismatch",
        `refused the link to ${this.describe()}: cookie mismatch (the nodes' node.cookie differ)`,
      );
      return;
    }
    if (expected !== "" && c.node !== expected) {
      this.remote = expected;
      this.refuse(
        "node_mismatch",
        `expected node ${expected}`,
        "node_mismatch",
        `refused the link to ${this.describe()}: the node there is ${c.node}`,
      );
      return;
    }
    this.step = "welcome";
    this.send(encodeAuth(proof(this.owner.cookie, "dialer", this.proofInput())));
  }

  private onAuth(body: BufReader): void {
    const mac = decodeAuth(body);
    if (!verifyProof(this.owner.cookie, "dialer", this.proofInput(), mac)) {
      this.refuse(
        "cookie_mismatch",
        "the cookies differ",
        "cookie_mismatch",
        `refused the link from ${this.describe()}: cookie mismatch (the nodes' node.cookie differ)`,
      );
      return;
    }
    const no = this.owner.admit(this);
    if (no !== null) {
      if (no.reason === "duplicate") this.superseded = true;
      this.refuse(
        no.reason,
        no.detail,
        REFUSE_CODES[no.reason],
        `refused the link from ${this.describe()}: ${no.detail}`,
      );
      return;
    }
    this.send(encodeWelcome());
    this.becomeOpen();
  }

  private becomeOpen(): void {
    this.step = "open";
    this.reader.maxFrame = MAX_FRAME;
    this.owner.established(this);
  }
}
