// Management applications (spec 000 §5): the AppID/AppSecret pairs that authenticate v3/v4 API
// requests, kept in the cluster store so every node accepts the same ones. Secrets are stored as
// bcrypt hashes: the secret is shown once, when the application is created (a generated one
// when the caller gives none), and never again. The default application of
// `management.default_application.*` is created at the first start only; a disabled (`status`
// false) or expired application does not authenticate.

import { randomBytes } from "node:crypto";
import type { SecretHasher } from "./credentials.ts";
import type { RecordStore } from "./records.ts";

/** Never expires. */
export const NEVER = "undefined";

export interface AppView {
  app_id: string;
  name: string;
  desc: string;
  status: boolean;
  /** Seconds since the epoch, or "undefined" (never). */
  expired: number | typeof NEVER;
}

export interface StoredApp extends AppView {
  secret_hash: string;
}

export interface NewApp {
  app_id: string;
  name?: string;
  secret?: string;
  desc?: string;
  status?: boolean;
  expired?: number | typeof NEVER;
}

export type AppUpdate = Partial<Pick<AppView, "name" | "desc" | "status" | "expired">>;

export class AppService {
  constructor(
    private readonly records: RecordStore<StoredApp>,
    private readonly hasher: SecretHasher,
  ) {}

  /** Creates the default application unless applications were set up before. */
  async bootstrap(done: boolean, id: string, secret: string): Promise<boolean> {
    if (done || (await this.records.list()).length > 0) return false;
    await this.create({ app_id: id, name: "Default", secret, desc: "Application user", status: true });
    return true;
  }

  /** True when `id` exists, is enabled, not expired, and has the well-known secret (start-up's check). */
  async wellKnownInUse(id: string, now = Date.now()): Promise<boolean> {
    const app = await this.records.get(id);
    return app !== undefined && usable(app, now) && this.hasher.isWellKnown(app.secret_hash);
  }

  /** True when `id` exists, is enabled, not expired, and `secret` is its secret. */
  async verify(id: string, secret: string, now = Date.now()): Promise<boolean> {
    const app = await this.records.get(id);
    const ok = await this.hasher.verify(id, secret, app?.secret_hash);
    return ok && app !== undefined && usable(app, now);
  }

  async list(): Promise<AppView[]> {
    return (await this.records.list()).map(view);
  }

  async get(id: string): Promise<AppView | undefined> {
    const app = await this.records.get(id);
    return app === undefined ? undefined : view(app);
  }

  /** The secret to hand to the caller, or "exists". */
  async create(a: NewApp): Promise<{ secret: string } | "exists"> {
    if ((await this.records.get(a.app_id)) !== undefined) return "exists";
    const secret = a.secret ?? randomBytes(24).toString("base64url");
    const created = await this.records.insert(a.app_id, {
      app_id: a.app_id,
      name: a.name ?? a.app_id,
      desc: a.desc ?? "",
      status: a.status ?? true,
      expired: a.expired ?? NEVER,
      secret_hash: await this.hasher.hash(secret),
    });
    if (!created) return "exists";
    this.hasher.forget();
    return { secret };
  }

  async update(id: string, u: AppUpdate): Promise<"ok" | "not_found"> {
    const app = await this.records.get(id);
    if (app === undefined) return "not_found";
    await this.records.put(id, {
      ...app,
      name: u.name ?? app.name,
      desc: u.desc ?? app.desc,
      status: u.status ?? app.status,
      expired: u.expired ?? app.expired,
    });
    this.hasher.forget();
    return "ok";
  }

  async remove(id: string): Promise<boolean> {
    const gone = await this.records.delete(id);
    this.hasher.forget();
    return gone;
  }
}

function view(a: StoredApp): AppView {
  return { app_id: a.app_id, name: a.name, desc: a.desc, status: a.status, expired: a.expired };
}

/** Enabled and not expired: an application that may authenticate. */
function usable(app: AppView, now: number): boolean {
  return app.status && (app.expired === NEVER || app.expired * 1000 > now);
}
