// Dashboard users (spec 000 §4 catalogue `/users`, `/change_pwd`, `/auth`; the v2 API's Basic
// credentials): `{username, tags}` with a bcrypt-hashed password, kept in the cluster store. The
// default user of `dashboard.default_user.*` is created at the first start and cannot be
// deleted (code 106).

import type { SecretHasher } from "./credentials.ts";
import type { RecordStore } from "./records.ts";

export interface UserView {
  username: string;
  tags: string;
}

export interface StoredUser extends UserView {
  password_hash: string;
}

export type UserRemoveOutcome = "ok" | "not_found" | "admin";
export type PasswordOutcome = "ok" | "not_found" | "bad_password";

export class UserService {
  constructor(
    private readonly records: RecordStore<StoredUser>,
    private readonly hasher: SecretHasher,
    /** The default user's login: the one user that cannot be deleted. */
    readonly admin: string,
  ) {}

  /** Creates the default user unless users were set up before. */
  async bootstrap(done: boolean, password: string): Promise<boolean> {
    if (done || (await this.records.list()).length > 0) return false;
    await this.create(this.admin, password, "administrator");
    return true;
  }

  /** True when `username` exists with the well-known password (start-up's check). */
  async wellKnownInUse(username: string): Promise<boolean> {
    const u = await this.records.get(username);
    return u !== undefined && (await this.hasher.isWellKnown(u.password_hash));
  }

  async verify(username: string, password: string): Promise<boolean> {
    const u = await this.records.get(username);
    return (await this.hasher.verify(username, password, u?.password_hash)) && u !== undefined;
  }

  async list(): Promise<UserView[]> {
    return (await this.records.list()).map((u) => ({ username: u.username, tags: u.tags }));
  }

  async create(username: string, password: string, tags = ""): Promise<"ok" | "exists"> {
    if ((await this.records.get(username)) !== undefined) return "exists";
    const created = await this.records.insert(username, {
      username,
      tags,
      password_hash: await this.hasher.hash(password),
    });
    if (!created) return "exists";
    this.hasher.forget();
    return "ok";
  }

  async update(username: string, tags: string): Promise<"ok" | "not_found"> {
    const u = await this.records.get(username);
    if (u === undefined) return "not_found";
    await this.records.put(username, { ...u, tags });
    return "ok";
  }

  async remove(username: string): Promise<UserRemoveOutcome> {
    if (username === this.admin) return "admin";
    const gone = await this.records.delete(username);
    this.hasher.forget();
    return gone ? "ok" : "not_found";
  }

  /** Sets a password without the old one (the CLI's `admins passwd`, run by the operator). */
  async setPassword(username: string, password: string): Promise<"ok" | "not_found"> {
    const u = await this.records.get(username);
    if (u === undefined) return "not_found";
    await this.records.put(username, { ...u, password_hash: await this.hasher.hash(password) });
    this.hasher.forget();
    return "ok";
  }

  async changePassword(username: string, oldPassword: string, newPassword: string): Promise<PasswordOutcome> {
    const u = await this.records.get(username);
    if (u === undefined) return "not_found";
    if (!(await this.hasher.verify(username, oldPassword, u.password_hash))) return "bad_password";
    await this.records.put(username, { ...u, password_hash: await this.hasher.hash(newPassword) });
    this.hasher.forget();
    return "ok";
  }
}
