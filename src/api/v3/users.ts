// Dashboard users (spec 000 §4 catalogue): `/users`, `/change_pwd/{username}` and `POST /auth`
// (checks a user's name and password: `{code: 0}`, or 401 with code 104 / 103). svc's own:
// `PUT /users/{name}/password` sets a password without the old one (`svc_ctl admins passwd`).

import { z } from "@hono/zod-openapi";
import type { ApiDeps } from "../deps.ts";
import { ok } from "../envelope.ts";
import { ApiError, CODE } from "../errors.ts";
import type { RouteTable } from "../route-table.ts";
import { Done, envelope, User } from "../schemas.ts";

const NameParam = z.object({
  name: z
    .string()
    .min(1)
    .openapi({ param: { name: "name", in: "path" }, description: "User name" }),
});
const UsernameParam = z.object({
  username: z
    .string()
    .min(1)
    .openapi({ param: { name: "username", in: "path" }, description: "User name" }),
});
const NewUser = z
  .object({ username: z.string().min(1).max(64), password: z.string().min(1), tags: z.string().optional() })
  .openapi("NewUser");
const UserUpdate = z.object({ tags: z.string() }).openapi("UserUpdate");
const PasswordChange = z.object({ old_pwd: z.string(), new_pwd: z.string().min(1) }).openapi("PasswordChange");
const PasswordSet = z.object({ password: z.string().min(1) }).openapi("PasswordSet");
const Login = z.object({ username: z.string().optional(), password: z.string().optional() }).openapi("Login");

const noSuchUser = (name: string) => new ApiError(404, CODE.noSuchUser, `user does not exist: ${name}`);

export function userRoutes(t: RouteTable, d: ApiDeps): void {
  const users = d.services.users;
  const tag = "users";

  t.add(
    {
      name: "auth_user",
      method: "post",
      path: "/auth",
      descr: "Authenticate a dashboard user",
      tag,
      body: Login,
      response: Done,
    },
    async ({ body }) => {
      if (!body.username || !body.password)
        throw new ApiError(401, CODE.emptyCredentials, "empty username or password");
      if (!(await users.verify(body.username, body.password)))
        throw new ApiError(401, CODE.badCredentials, "username or password error");
      return ok();
    },
  );

  t.add(
    {
      name: "list_users",
      method: "get",
      path: "/users",
      descr: "List dashboard users",
      tag,
      response: envelope(z.array(User)),
    },
    async () => ok(await users.list()),
  );

  t.add(
    {
      name: "add_user",
      method: "post",
      path: "/users",
      descr: "Add a dashboard user",
      tag,
      body: NewUser,
      response: Done,
    },
    async ({ body }) => {
      if ((await users.create(body.username, body.password, body.tags ?? "")) === "exists")
        throw new ApiError(409, CODE.userExists, `user already exists: ${body.username}`);
      return ok();
    },
  );

  t.add(
    {
      name: "update_user",
      method: "put",
      path: "/users/{name}",
      descr: "Update a dashboard user's tags",
      tag,
      params: NameParam,
      body: UserUpdate,
      response: Done,
    },
    async ({ params, body }) => {
      if ((await users.update(params.name, body.tags)) === "not_found") throw noSuchUser(params.name);
      return ok();
    },
  );

  t.add(
    {
      name: "delete_user",
      method: "delete",
      path: "/users/{name}",
      descr: "Delete a dashboard user",
      tag,
      params: NameParam,
      response: Done,
    },
    async ({ params }) => {
      const out = await users.remove(params.name);
      if (out === "admin") throw new ApiError(403, CODE.adminUndeletable, "the default user cannot be deleted");
      if (out === "not_found") throw noSuchUser(params.name);
      return ok();
    },
  );

  t.add(
    {
      name: "change_pwd",
      method: "put",
      path: "/change_pwd/{username}",
      descr: "Change a dashboard user's password",
      tag,
      params: UsernameParam,
      body: PasswordChange,
      response: Done,
    },
    async ({ params, body }) => {
      const out = await users.changePassword(params.username, body.old_pwd, body.new_pwd);
      if (out === "not_found") throw noSuchUser(params.username);
      if (out === "bad_password") throw new ApiError(400, CODE.oldPasswordWrong, "old password is wrong");
      return ok();
    },
  );

  t.add(
    {
      name: "set_user_password",
      method: "put",
      path: "/users/{name}/password",
      descr: "Set a dashboard user's password (svc)",
      tag,
      params: NameParam,
      body: PasswordSet,
      response: Done,
    },
    async ({ params, body }) => {
      if ((await users.setPassword(params.name, body.password)) === "not_found") throw noSuchUser(params.name);
      return ok();
    },
  );
}
