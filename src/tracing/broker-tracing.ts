// Message and connection tracing for the broker (`telemetry.tracing = on`; main.ts creates it only
// then, so with tracing off neither the port nor the hooks exist). Spans, per the OpenTelemetry
// messaging conventions (`messaging.system = mqtt`):
//   publish <topic>   (server)    a PUBLISH received: hooks and routing run inside it; its parent is
//                                 the publisher's `traceparent` user property when it sent one
//   forward <topic>   (producer)  the message handed to the link towards another node
//   dispatch <topic>  (consumer)  a forwarded message delivered locally on the receiving node
//   deliver <topic>   (producer)  one PUBLISH to one subscriber; at most `maxDeliverSpans` per
//                                 message, and 5.0 subscribers receive its traceparent
//   ack <topic>       (consumer)  the PUBACK/PUBCOMP of a QoS 1/2 delivery that has a deliver span,
//                                 as that span's child
//   connect           (server)    CONNECT to CONNACK, with an `authenticate` child span
// The span context of a traced message travels in `msg.headers` (traceparent/tracestate), which
// the inter-node link carries as JSON. A publish the sampler drops is routed untraced (no headers,
// shared PUBLISH bytes), so sampling 1% costs little more than tracing off.

import type { SpanContext } from "@opentelemetry/api";
import type { Broker } from "../broker/broker.ts";
import { type DeliveryTrace, type TracingPort, UNTRACED } from "../broker/ports.ts";
import type { ClientInfo, Message, QoS } from "../broker/types.ts";
import { PRIORITY } from "../hooks/priorities.ts";
import {
  carrierOfHeaders,
  MESSAGING_SYSTEM,
  type Span,
  type SpanGroup,
  type TraceCarrier,
  type Tracing,
} from "../telemetry/tracing.ts";

const OWNER = "tracing";

/** Start options of a publish span without a traceparent (one object each: the unsampled path allocates nothing). */
const SERVER_IN_CONTEXT = Object.freeze({ kind: "server" as const });
/** A client's PUBLISH without a traceparent: a root span, no lookup of the active context. */
const SERVER_ROOT = Object.freeze({ kind: "server" as const, parent: null });

type Attrs = Record<string, string | number | boolean>;

interface DeliverState {
  /** Deliver spans made so far. */
  n: number;
  /** The deliver spans' parent (the publish or dispatch span); undefined: the carrier is invalid. */
  parent: SpanContext | undefined;
  /** The parent's trace state, serialized once; undefined when there is none. */
  tracestate: string | undefined;
  name: string;
  /**
   * The deliver spans' shared attributes: the operation's, then the message's (messageAttrs, one
   * object for all the message's spans).
   */
  shared: readonly [Attrs, Attrs];
  /** Traced QoS 1/2 deliveries awaiting their acknowledgement, per client id. */
  acks?: Map<string, { parent: SpanContext; qos: QoS }>;
  /**
   * The deliver spans made while the message's routing runs, recorded together when it is over;
   * undefined outside it (a delivery from a queue later records its span alone).
   */
  group?: SpanGroup;
}

/**
 * A traced message's headers: its own headers and the carrier as properties, and the deliver state
 * in a private field, which a copy (a spread, JSON: forwarding, storing) leaves behind. Not a
 * non-enumerable property (Object.defineProperty costs microseconds where the code is cold, a
 * sampled message among a hundred) nor a WeakMap (ephemerons are costly to collect).
 */
class TracedHeaders {
  [key: string]: unknown;
  #state: DeliverState;

  constructor(h: Record<string, unknown> | undefined, c: TraceCarrier | undefined, state: DeliverState) {
    if (h !== undefined) Object.assign(this, h);
    if (c !== undefined) setCarrier(this, c);
    this.#state = state;
  }

  /** The deliver state of a message's headers, undefined when they have none. */
  static stateOf(h: object | undefined): DeliverState | undefined {
    return h !== undefined && #state in h ? (h as TracedHeaders).#state : undefined;
  }
}

/** What a delivery's PUBLISH carries: span `spanId` of trace `traceId`, under the message's trace state. */
function traceOf(st: DeliverState, traceId: string, spanId: string, traceFlags: number): DeliveryTrace {
  return { traceId, spanId, traceFlags, tracestate: st.tracestate };
}

/** Headers `h` carry `c` from now on (a tracestate `c` has not is removed). */
function setCarrier(h: Record<string, unknown>, c: TraceCarrier): void {
  h.traceparent = c.traceparent;
  if (c.tracestate !== undefined) h.tracestate = c.tracestate;
  else if (h.tracestate !== undefined) delete h.tracestate;
}

/** A copy of headers `h` carrying `c` (what a forwarded message takes along). */
function withCarrier(h: Record<string, unknown> | undefined, c: TraceCarrier): Record<string, unknown> {
  const out: Record<string, unknown> = { ...h };
  setCarrier(out, c);
  return out;
}

export class BrokerTracing implements TracingPort {
  /** Open CONNECT spans (and their authenticate child) per connecting client. */
  private readonly connects = new WeakMap<ClientInfo, { span: Span; auth: Span | undefined }>();
  /** Each subscriber's own deliver span attributes per QoS (subscriberAttrs). */
  private readonly subscribers = new WeakMap<ClientInfo, readonly [Attrs, Attrs, Attrs]>();
  /** The attributes of each operation's spans that do not depend on the message (made once). */
  private readonly ops: Record<"publish" | "dispatch" | "deliver" | "ack" | "forward", Attrs>;

  constructor(
    private readonly t: Tracing,
    private readonly nodeName: string,
  ) {
    const op = (operation: string, type: string): Attrs =>
      Object.freeze({
        "messaging.system": MESSAGING_SYSTEM,
        "messaging.operation.name": operation,
        "messaging.operation.type": type,
        "svc.node": nodeName,
      });
    this.ops = {
      publish: op("publish", "receive"),
      dispatch: op("dispatch", "process"),
      deliver: op("deliver", "send"),
      ack: op("ack", "settle"),
      forward: op("forward", "send"),
    };
  }

  /** Sets the broker's tracing port and adds the connection hooks. */
  attach(broker: Broker): void {
    broker.tracing = this;
    broker.hooks.add("client.connect", (c, props) => this.onConnect(c, props), PRIORITY.tracing, OWNER);
    broker.hooks.add("client.authenticate", (c) => this.onAuthenticate(c), PRIORITY.tracing, OWNER);
    broker.hooks.add("client.enhanced_auth", (c) => this.onAuthenticate(c), PRIORITY.tracing, OWNER);
    broker.hooks.add("client.connack", (c, rc) => this.onConnack(c, rc), PRIORITY.tracing, OWNER);
    broker.hooks.add("message.acked", (c, msg) => this.onAcked(c, msg), PRIORITY.tracing, OWNER);
  }

  detach(broker: Broker): void {
    if (broker.tracing === this) broker.tracing = null;
    broker.hooks.removeOwner(OWNER);
  }

  /**
   * A subscriber's own attributes of its deliver spans at `qos`: made once per connection and QoS,
   * frozen, so that the encoder encodes them once too (a fan-out's deliver spans differ only there).
   */
  private subscriberAttrs(client: ClientInfo, qos: QoS): Attrs {
    let byQos = this.subscribers.get(client);
    if (byQos === undefined || byQos[0]["messaging.consumer.id"] !== client.clientId) {
      const id = client.clientId;
      const of = (q: QoS): Attrs => Object.freeze({ "messaging.consumer.id": id, "svc.delivery.qos": q });
      byQos = [of(0), of(1), of(2)];
      this.subscribers.set(client, byQos);
    }
    return byQos[qos];
  }

  /** The attributes of a message's spans that depend on the message (one object per traced message). */
  private messageAttrs(msg: Message): Attrs {
    return {
      "messaging.destination.name": msg.topic,
      "messaging.message.body.size": msg.payload.length,
      "messaging.mqtt.qos": msg.qos,
      "messaging.mqtt.retain": msg.retain,
      "messaging.client.id": msg.from,
    };
  }

  /** The deliver spans' state of a traced message under `parent`. */
  private deliverState(msg: Message, message: Attrs, parent: SpanContext | undefined): DeliverState {
    const ts = parent?.traceState?.serialize();
    return {
      n: 0,
      parent,
      tracestate: ts === "" ? undefined : ts,
      name: `deliver ${msg.topic}`,
      shared: [this.ops.deliver, message],
    };
  }

  publish(msg: Message, route: (msg: Message) => number, received: boolean): number {
    // $SYS and event messages are not traced. Without a traceparent a client's PUBLISH starts a
    // trace; an internal publish continues the active one (an API request, a rule) or starts one.
    if (msg.sys) return UNTRACED;
    const up = msg.properties?.userProperties;
    const incoming = up === undefined ? undefined : this.t.carrierOf((k) => up[k]);
    // An unsampled publish (the sampler's decision, taken without a span where it allows) is
    // routed untraced, by the broker.
    const span =
      incoming !== undefined
        ? this.t.startSampled("publish ", msg.topic, { kind: "server", parent: incoming })
        : received
          ? this.t.startRoot("publish ", msg.topic, SERVER_ROOT)
          : this.t.startSampled("publish ", msg.topic, SERVER_IN_CONTEXT);
    if (span === undefined) return UNTRACED;
    // Attributes only on sampled spans (an unsampled publish builds nothing).
    return this.deliverInside(span, msg, this.ops.publish, route, received);
  }

  /**
   * Runs the deliveries of `msg` (`run`) inside its sampled publish or dispatch span: the message
   * carries the span's context to its subscribers, and the span counts the deliveries. `fromRoot`:
   * the message came from a client or another node, not from a caller inside a context (Tracing.run).
   */
  private deliverInside(
    span: Span,
    msg: Message,
    operation: Attrs,
    run: (msg: Message) => number,
    fromRoot: boolean,
  ): number {
    // The message's attributes: one object for this span and its deliver and ack spans.
    const message = this.messageAttrs(msg);
    this.t.setSharedAttributes(span, [operation, message]);
    const sc = span.spanContext();
    const carrier = this.t.carrierOfContext(sc);
    // The deliveries' parent is this span (known here: no traceparent to parse per message).
    const st = this.deliverState(msg, message, sc);
    st.group = this.t.openGroup(st.name, sc, "producer", st.shared);
    msg.headers = new TracedHeaders(msg.headers, carrier, st);
    try {
      const n = this.t.run(span, run, msg, fromRoot);
      span.setAttribute("svc.deliveries", n);
      return n;
    } catch (err) {
      this.t.fail(span, err);
      throw err;
    } finally {
      const g = st.group;
      st.group = undefined;
      if (g !== undefined) this.t.closeGroup(g);
      span.end();
    }
  }

  forward(msg: Message, node: string): Message {
    const parent = carrierOfHeaders(msg.headers);
    if (parent === undefined) return msg;
    const span = this.t.start(`forward ${msg.topic}`, {
      kind: "producer",
      parent,
      attributes: { ...this.ops.forward, ...this.messageAttrs(msg), "svc.peer": node },
    });
    span.end();
    return { ...msg, headers: withCarrier(msg.headers, this.t.carrier(span)) };
  }

  dispatch(msg: Message, run: (msg: Message) => number): number {
    const parent = carrierOfHeaders(msg.headers);
    if (parent === undefined) return run(msg);
    const span = this.t.startSampled("dispatch ", msg.topic, { kind: "consumer", parent });
    if (span === undefined) return run(msg);
    return this.deliverInside(span, msg, this.ops.dispatch, run, true);
  }

  deliver(msg: Message, client: ClientInfo, qos: QoS, carrier: boolean): DeliveryTrace | null {
    const h = msg.headers;
    if (h === undefined) return null;
    let st = TracedHeaders.stateOf(h);
    if (st === undefined) {
      // Once per traced message whose headers came without the state (a copy of a traced
      // message's headers): its parent parsed, the deliver span name and common attributes.
      const c = carrierOfHeaders(h);
      if (c === undefined) return null;
      st = this.deliverState(msg, this.messageAttrs(msg), this.t.contextOf(c));
      msg.headers = new TracedHeaders(h, undefined, st);
    }
    // Under an invalid parent nothing is traced: the message goes as it came.
    const parent = st.parent;
    if (parent === undefined) return null;
    // Beyond the per-message cap, the subscriber continues the trace from the publish span.
    if (st.n >= this.t.maxDeliverSpans)
      return carrier ? traceOf(st, parent.traceId, parent.spanId, parent.traceFlags) : null;
    st.n++;
    // The message's attributes are shared by its deliver spans; each adds the subscriber's.
    const own = this.subscriberAttrs(client, qos);
    const g = st.group;
    let sc: SpanContext | undefined;
    if (g !== undefined) {
      const id = g.add(own);
      if (qos === 0) return carrier ? traceOf(st, parent.traceId, id, 1) : null;
      sc = g.contextOf(id);
    } else {
      sc = this.t.recordChild(st.name, parent, "producer", st.shared, own);
      if (sc === undefined) return carrier ? traceOf(st, parent.traceId, parent.spanId, parent.traceFlags) : null;
    }
    // A QoS 1/2 delivery awaits its PUBACK/PUBCOMP: the ack span will be a child of this one.
    if (qos > 0) (st.acks ??= new Map()).set(client.clientId, { parent: sc, qos });
    return carrier ? traceOf(st, sc.traceId, sc.spanId, sc.traceFlags) : null;
  }

  /** PUBACK (QoS 1) or PUBCOMP (QoS 2) of a traced delivery: an `ack` span under its deliver span. */
  private onAcked(c: ClientInfo, msg: Message): void {
    const st = TracedHeaders.stateOf(msg.headers);
    const d = st?.acks?.get(c.clientId);
    if (st === undefined || d === undefined) return;
    st.acks?.delete(c.clientId);
    this.t.recordChild(`ack ${msg.topic}`, d.parent, "consumer", [this.ops.ack, st.shared[1]], {
      "messaging.consumer.id": c.clientId,
      "svc.delivery.qos": d.qos,
      "mqtt.ack.packet": d.qos === 1 ? "PUBACK" : "PUBCOMP",
    });
  }

  private onConnect(c: ClientInfo, props: Record<string, unknown> | undefined): void {
    const up = props?.userProperties as Record<string, unknown> | undefined;
    const incoming = up === undefined ? undefined : this.t.carrierOf((k) => up[k]);
    const span = this.t.start("connect", {
      kind: "server",
      parent: incoming ?? null,
      attributes: {
        "messaging.system": MESSAGING_SYSTEM,
        "messaging.client.id": c.clientId,
        "network.peer.address": c.peerHost,
        "network.peer.port": c.peerPort,
        "network.protocol.name": "mqtt",
        "network.protocol.version": String(c.protoVer),
        "svc.listener": c.listener,
        "svc.node": this.nodeName,
      },
    });
    this.connects.set(c, { span, auth: undefined });
  }

  private onAuthenticate(c: ClientInfo): undefined {
    const open = this.connects.get(c);
    if (open !== undefined && open.auth === undefined)
      open.auth = this.t.start("authenticate", { parent: open.span, attributes: { "svc.node": this.nodeName } });
    return undefined;
  }

  private onConnack(c: ClientInfo, rc: number): void {
    const open = this.connects.get(c);
    if (open === undefined) return;
    this.connects.delete(c);
    for (const s of [open.auth, open.span]) {
      if (s === undefined) continue;
      s.setAttribute("mqtt.connack.reason_code", rc);
      if (rc >= 0x80) this.t.error(s, `CONNACK 0x${rc.toString(16)}`);
    }
    open.span.setAttribute("messaging.client.id", c.clientId);
    open.auth?.end();
    open.span.end();
  }
}
