// Spans of the bridges (`telemetry.tracing = on`): a traced message (its publish span's context in
// `msg.headers`, which the bridge's cache keeps) that a bridge forwards gets
//   bridge <topic>   (producer)  from the send to the other side to its acknowledgement (QoS 1/2)
//                                or its write (QoS 0); <topic> is the topic sent (mountpoint
//                                applied); a 5.0 MQTT bridge carries it as `traceparent` (and
//                                `tracestate`) user properties, so the trace continues at the
//                                remote broker, and an RPC bridge in the message's headers
// Untraced messages make nothing; a send that fails (connection lost) ends its span with an error,
// and the resend after reconnection makes a new one.

import type { Message } from "../broker/types.ts";
import { carrierOfHeaders, MESSAGING_SYSTEM, type Span, type Tracing } from "../telemetry/tracing.ts";

export class BridgeTracing {
  constructor(
    private readonly t: Tracing,
    private readonly nodeName: string,
  ) {}

  /** The span of one forwarded message, undefined when the message is not traced (or not sampled). */
  send(msg: Message, topic: string, bridge: string, address: string): Span | undefined {
    const parent = carrierOfHeaders(msg.headers);
    if (parent === undefined) return undefined;
    const span = this.t.startSampled("bridge ", topic, { kind: "producer", parent });
    span?.setAttributes({
      "messaging.system": MESSAGING_SYSTEM,
      "messaging.operation.type": "send",
      "messaging.destination.name": topic,
      "messaging.mqtt.qos": msg.qos,
      "svc.bridge.name": bridge,
      "server.address": address,
      "svc.node": this.nodeName,
    });
    return span;
  }

  /** The W3C context of a send span, to carry to the other side. */
  carrier(span: Span): Record<string, string> {
    const c = this.t.carrier(span);
    return c.tracestate === undefined
      ? { traceparent: c.traceparent }
      : { traceparent: c.traceparent, tracestate: c.tracestate };
  }

  /** Ends a send span: an error status when the send failed. */
  end(span: Span, err: Error | undefined): void {
    if (err !== undefined) this.t.fail(span, err);
    span.end();
  }
}
