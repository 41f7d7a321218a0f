// Rule-engine event names: the canonical event keys and how each dialect spells them in FROM.
// 4.x names events as topics under `$events/` (`"$events/client_connected"`); 3.x named the hook
// (`"client.connected"`) and had aliases for groups (`"$message"`, `"$client"`, `"$session"`,
// `"$any"`). Both map to one key, the hook name (`client.connected`), so the engine indexes rules
// by key whatever dialect their SQL uses. Anything else in FROM is an MQTT topic filter
// (message.publish of a matching topic). Pure data; the catalogue with columns is in events.ts.

export const EVENT_KEYS = [
  "message.publish",
  "message.delivered",
  "message.acked",
  "message.dropped",
  "delivery.dropped",
  "client.connected",
  "client.disconnected",
  "client.connack",
  "client.check_acl_complete",
  "client.subscribe",
  "client.unsubscribe",
  "session.subscribed",
  "session.unsubscribed",
] as const;

export type EventKey = (typeof EVENT_KEYS)[number];

/** The `$events/...` FROM topic of each event (4.x). */
export const EVENT_TOPICS: Readonly<Record<EventKey, string>> = {
  "message.publish": "$events/message_publish",
  "message.delivered": "$events/message_delivered",
  "message.acked": "$events/message_acked",
  "message.dropped": "$events/message_dropped",
  "delivery.dropped": "$events/delivery_dropped",
  "client.connected": "$events/client_connected",
  "client.disconnected": "$events/client_disconnected",
  "client.connack": "$events/client_connack",
  "client.check_acl_complete": "$events/client_check_acl_complete",
  "client.subscribe": "$events/client_subscribe",
  "client.unsubscribe": "$events/client_unsubscribe",
  "session.subscribed": "$events/session_subscribed",
  "session.unsubscribed": "$events/session_unsubscribed",
};

/** 3.x FROM names (hook names) of the events that had one. */
export const LEGACY_EVENT_NAMES: Readonly<Record<string, EventKey>> = {
  "message.publish": "message.publish",
  "message.deliver": "message.delivered",
  "message.delivered": "message.delivered",
  "message.acked": "message.acked",
  "message.dropped": "message.dropped",
  "client.connected": "client.connected",
  "client.disconnected": "client.disconnected",
  "client.subscribe": "client.subscribe",
  "client.unsubscribe": "client.unsubscribe",
  "session.subscribed": "session.subscribed",
  "session.unsubscribed": "session.unsubscribed",
};

/** 3.x group aliases. */
export const EVENT_ALIASES: Readonly<Record<string, readonly EventKey[]>> = {
  $message: ["message.publish", "message.delivered", "message.acked", "message.dropped"],
  $client: EVENT_KEYS.filter((k) => k.startsWith("client.")),
  $session: ["session.subscribed", "session.unsubscribed"],
  $any: EVENT_KEYS,
};

const byTopic = new Map<string, EventKey>();
for (const k of EVENT_KEYS) byTopic.set(EVENT_TOPICS[k], k);

/** Prefix of 4.x event topics; a FROM name under it that names no event is an error. */
export const EVENTS_PREFIX = "$events/";

/**
 * The events a FROM name stands for: one key for `$events/<name>` and 3.x hook names, several
 * for 3.x aliases, null when the name is not an event (then it is a topic filter). A name under
 * `$events/` that is unknown gives an empty list.
 */
export function eventsOfSource(name: string): readonly EventKey[] | null {
  if (name.startsWith(EVENTS_PREFIX)) {
    const k = byTopic.get(name);
    return k === undefined ? [] : [k];
  }
  const legacy = LEGACY_EVENT_NAMES[name];
  if (legacy !== undefined && Object.hasOwn(LEGACY_EVENT_NAMES, name)) return [legacy];
  if (Object.hasOwn(EVENT_ALIASES, name)) return EVENT_ALIASES[name];
  return null;
}
