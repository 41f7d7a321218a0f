// The key layout of the cluster store (documented in docs/architecture.md, "Store and key layout").
// Every key sits under `<cluster.etcd.prefix>/<cluster.name>/`, so clusters can share one etcd.
// Names chosen by users (client ids, topics, filters, usernames) are one segment each, with `%`
// and `/` escaped, so a filter `a/b` and a filter `a` never share a key prefix.

export type BanKind = "clientid" | "username" | "peerhost";
export type AclKind = "clientid" | "username" | "all";

/** Escapes `%` and `/`: a name becomes exactly one key segment, still readable in etcdctl. */
export function encodeSegment(name: string): string {
  return name.replaceAll("%", "%25").replaceAll("/", "%2F");
}

export function decodeSegment(segment: string): string {
  return segment.replaceAll("%2F", "/").replaceAll("%25", "%");
}

export class ClusterKeys {
  /** `<prefix>/<cluster>/`, with a trailing slash. */
  readonly root: string;

  constructor(prefix: string, clusterName: string) {
    this.root = `${prefix.replace(/\/+$/, "")}/${encodeSegment(clusterName)}/`;
  }

  /** Members: `nodes/<node>` -> JSON {address, version...}, under the node's lease. */
  nodes(): string {
    return `${this.root}nodes/`;
  }
  node(node: string): string {
    return this.nodes() + encodeSegment(node);
  }

  /** Routes: `routes/<filter>/<node>` -> empty, under the node's lease. */
  routes(): string {
    return `${this.root}routes/`;
  }
  routesOf(filter: string): string {
    return `${this.routes()}${encodeSegment(filter)}/`;
  }
  route(filter: string, node: string): string {
    return this.routesOf(filter) + encodeSegment(node);
  }
  parseRoute(key: string): { filter: string; node: string } | undefined {
    const rest = this.strip(key, this.routes());
    const slash = rest?.indexOf("/") ?? -1;
    if (rest === undefined || slash < 0) return undefined;
    return { filter: decodeSegment(rest.slice(0, slash)), node: decodeSegment(rest.slice(slash + 1)) };
  }

  /** Shared-subscription groups: `shared/<group>/<filter>/<node>` -> empty, under the node's lease. */
  sharedRoutes(): string {
    return `${this.root}shared/`;
  }
  sharedRoute(group: string, filter: string, node: string): string {
    return `${this.sharedRoutes()}${encodeSegment(group)}/${encodeSegment(filter)}/${encodeSegment(node)}`;
  }
  parseSharedRoute(key: string): { group: string; filter: string; node: string } | undefined {
    const rest = this.strip(key, this.sharedRoutes());
    const parts = rest?.split("/");
    if (parts === undefined || parts.length !== 3) return undefined;
    return { group: decodeSegment(parts[0]), filter: decodeSegment(parts[1]), node: decodeSegment(parts[2]) };
  }

  /** Client registrations (session ownership): `clients/<clientid>` -> node, under its lease. */
  clients(): string {
    return `${this.root}clients/`;
  }
  client(clientId: string): string {
    return this.clients() + encodeSegment(clientId);
  }

  /** Rule engine rules: `rules/<id>` -> JSON rule. */
  rules(): string {
    return `${this.root}rules/`;
  }
  rule(id: string): string {
    return this.rules() + encodeSegment(id);
  }

  /** Rule engine resources: `resources/<id>` -> JSON resource. */
  resources(): string {
    return `${this.root}resources/`;
  }
  resource(id: string): string {
    return this.resources() + encodeSegment(id);
  }

  /** Bans: `banned/<as>/<who>` -> JSON {who, as, by, reason, at, until}. */
  banned(): string {
    return `${this.root}banned/`;
  }
  ban(as: BanKind, who: string): string {
    return `${this.banned()}${as}/${encodeSegment(who)}`;
  }

  /** Management API applications: `apps/<app_id>` -> JSON app (secret hashed). */
  apps(): string {
    return `${this.root}apps/`;
  }
  app(appId: string): string {
    return this.apps() + encodeSegment(appId);
  }

  /** Dashboard/API administrators: `users/<username>` -> JSON user (password hashed). */
  users(): string {
    return `${this.root}users/`;
  }
  user(username: string): string {
    return this.users() + encodeSegment(username);
  }

  /** Client-id credentials: `auth/clientid/<clientid>` -> JSON {salt, hash, created_at}. */
  authClientids(): string {
    return `${this.root}auth/clientid/`;
  }
  authClientid(clientId: string): string {
    return this.authClientids() + encodeSegment(clientId);
  }

  /** Username credentials: `auth/username/<username>` -> JSON {salt, hash, is_superuser...}. */
  authUsernames(): string {
    return `${this.root}auth/username/`;
  }
  authUsername(username: string): string {
    return this.authUsernames() + encodeSegment(username);
  }

  /** ACL data: `acl/clientid/<id>/<topic>`, `acl/username/<name>/<topic>`, `acl/all/<topic>`. */
  acl(): string {
    return `${this.root}acl/`;
  }
  /** The prefix of one subject's ACL rules (`who` is ignored for kind `all`). */
  aclOf(kind: AclKind, who?: string): string {
    return kind === "all" ? `${this.acl()}all/` : `${this.acl()}${kind}/${encodeSegment(who ?? "")}/`;
  }
  aclRule(kind: AclKind, who: string | undefined, topic: string): string {
    return this.aclOf(kind, who) + encodeSegment(topic);
  }

  /** The last segment of `key` under `prefix`, decoded; undefined when `key` is not under it. */
  leaf(key: string, prefix: string): string | undefined {
    const rest = this.strip(key, prefix);
    return rest === undefined ? undefined : decodeSegment(rest.slice(rest.lastIndexOf("/") + 1));
  }

  private strip(key: string, prefix: string): string | undefined {
    return key.startsWith(prefix) ? key.slice(prefix.length) : undefined;
  }
}
