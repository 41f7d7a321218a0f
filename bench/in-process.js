// The in-process core the micro-benchmarks measure: a broker with ten connected subscribers (or as
// many as asked; half on `bench/+/t`, half on `bench/a/t`), each a real channel and session over a
// connection port that drops the bytes, so a publish runs the whole core (hooks, routing,
// delivery, PUBLISH bytes) without a socket. Used by metrics-cost.js, rules-cost.js and
// tracing-cost.js.

import { Broker } from "../dist/broker/broker.js";
import { Channel } from "../dist/broker/channel/channel.js";
import { Session } from "../dist/broker/session/session.js";
import { DEFAULT_ZONE } from "../dist/broker/settings.js";
import { silentLogger } from "../dist/telemetry/logger.js";

/** The number after `flag` on the command line, `dflt` without the flag; one `valid` refuses stops the run. */
export function numberArg(flag, dflt, valid) {
  const at = process.argv.indexOf(flag);
  if (at < 0) return dflt;
  const n = Number(process.argv[at + 1]);
  if (!(Number.isFinite(n) && valid(n))) throw new Error(`${flag} ${process.argv[at + 1]}: not a valid value`);
  return n;
}

/** `--seconds N` (more than 0) from the command line, or `dflt`. */
export function secondsArg(dflt) {
  return numberArg("--seconds", dflt, (n) => n > 0);
}

/** What a bench channel knows of its connection. */
export const BENCH_INFO = {
  listener: "mqtt:tcp:bench",
  protocol: "mqtt:tcp",
  zone: "external",
  peerHost: "127.0.0.1",
  peerPort: 1,
  sockHost: "127.0.0.1",
  sockPort: 1883,
};

/** A connection port speaking `protoVer` that drops the bytes; `close` is what closing it does. */
export function benchPort(protoVer, close = () => {}) {
  return {
    protoVer,
    tracer: null,
    setMaxInbound() {},
    send: () => 0,
    sendBytes() {},
    writable: () => true,
    bufferedBytes: () => 0,
    readingHeld: () => false,
    close,
  };
}

/** A broker with `subscribers` subscribed channels speaking `protoVer`; returns it with its zone and logger. */
export function benchBroker({ protoVer = 4, subscribers = 10 } = {}) {
  const zone = { ...DEFAULT_ZONE };
  const logger = silentLogger();
  const broker = new Broker(
    { nodeName: "bench@127.0.0.1", sharedStrategy: "random", zones: new Map([["external", zone]]), tickInterval: 1000 },
    logger,
  );
  const port = benchPort(protoVer);
  for (let i = 0; i < subscribers; i++) {
    const ch = new Channel(port, BENCH_INFO, broker, zone);
    ch.client.clientId = `s${i}`;
    ch.client.protoVer = protoVer;
    ch.protoVer = protoVer;
    ch.state = "connected";
    const s = new Session({ ...ch.client }, zone, broker);
    ch.session = s;
    s.attach(ch, 65535);
    const opts = { qos: 1, nl: false, rap: false, rh: 0, subId: 0, share: undefined };
    broker.subscribe(s, i % 2 === 0 ? "bench/+/t" : "bench/a/t", opts);
  }
  return { broker, zone, logger };
}
