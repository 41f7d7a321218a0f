// The one table of hook priorities: higher runs first. Features register with these names only,
// so the order in which independent features see an event is decided here, not by load order.

export const PRIORITY = {
  /** Tracing opens spans before anyone else sees the event. */
  tracing: 1000,
  /** Bans are checked before any authentication provider. */
  banned: 900,
  /** Authentication providers: the chain order among them is their start order. */
  auth: 500,
  /** ACL file and providers. */
  acl: 500,
  /** Built-in $SYS subscription guard until the ACL plugin takes over. */
  sysGuard: 400,
  retainer: 300,
  delayed: 290,
  rules: 200,
  /** Bridges forward what the features before them let through. */
  bridges: 150,
  sys: 100,
  metrics: 50,
  default: 0,
} as const;
