// The rule engine's endpoints (spec 000 §4 "Rules", "Actions", "Resource types and resources",
// the catalogue's `/resource_status/{id}`, `POST /resources/{id}`, `/rule_events`; emqx-facts
// §1.4 and §2): rules (both create variants, `?test=true` for the rule test, which answers HTTP
// 200 with `{code: 404, message: "SQL Not Match"}` or `{code: 400, ...}` as the family did),
// actions, resource types, resources (`?test=true`: a dry-run connect), their status and start.
// Expected failures answer 400/404 with `{code: <status>, message}`.

import { z } from "@hono/zod-openapi";
import type { RuleService } from "../../services/rules.ts";
import { RuleServiceError } from "../../services/rules.ts";
import { pageOf } from "../common.ts";
import type { ApiDeps } from "../deps.ts";
import { ok, paged } from "../envelope.ts";
import { ApiError } from "../errors.ts";
import type { RouteTable } from "../route-table.ts";
import { Done, envelope, pagedEnvelope, pageQuery, queryBool } from "../schemas.ts";

const pathParam = (name: string, description: string) =>
  z
    .string()
    .min(1)
    .openapi({ param: { name, in: "path" }, description });

const IdParam = z.object({ id: pathParam("id", "Rule or resource id") });
const NameParam = z.object({ name: pathParam("name", "Action or resource type name") });
const TypeParam = z.object({ type: pathParam("type", "Resource type name") });
const TestQuery = z.object({ test: queryBool("true: test only (rule test / resource dry run)") });
const ForQuery = z.object({ for: z.string().optional().openapi({ description: "A hook or event name" }) });

const Params = z.record(z.string(), z.unknown());
// Two levels, not a recursive schema: the OpenAPI generator cannot walk a lazy self-reference,
// and fallbacks of fallbacks have no use.
const FallbackIn = z.object({ name: z.string(), params: Params.optional() });
const ActionIn = z.object({ name: z.string(), params: Params.optional(), fallbacks: z.array(FallbackIn).optional() });

const RuleBody = z
  .object({
    id: z.string().optional(),
    name: z.string().optional().openapi({ description: "First variant" }),
    for: z.string().optional().openapi({ description: "First variant (ignored: derived from FROM)" }),
    rawsql: z.string().optional(),
    actions: z.array(ActionIn).optional(),
    description: z.string().optional(),
    enabled: z.boolean().optional(),
    on_action_failed: z.enum(["continue", "stop"]).optional(),
    ctx: Params.optional().openapi({ description: "Rule test: event fields over the example" }),
    test: z.union([z.boolean(), z.string()]).optional(),
  })
  .openapi("NewRule");
const RulePatch = z
  .object({
    rawsql: z.string().optional(),
    actions: z.array(ActionIn).optional(),
    description: z.string().optional(),
    enabled: z.boolean().optional(),
    on_action_failed: z.enum(["continue", "stop"]).optional(),
  })
  .openapi("RulePatch");

const NodeMetrics = z.array(z.record(z.string(), z.unknown()));
const ActionInstance = z.object({
  id: z.string(),
  name: z.string(),
  params: Params,
  fallbacks: z.array(z.unknown()),
  metrics: NodeMetrics,
});
const Rule = z
  .object({
    id: z.string(),
    name: z.string().optional(),
    for: z.string(),
    rawsql: z.string(),
    actions: z.array(ActionInstance),
    description: z.string(),
    enabled: z.boolean(),
    on_action_failed: z.string(),
    created_at: z.number().int(),
    metrics: NodeMetrics,
  })
  .openapi("Rule");
const ParamSpecs = z.record(z.string(), z.record(z.string(), z.unknown()));
const Action = z
  .object({
    name: z.string(),
    app: z.string(),
    category: z.string(),
    description: z.string(),
    for: z.string(),
    types: z.array(z.string()),
    title: z.string(),
    params: ParamSpecs,
  })
  .openapi("Action");
const ResourceType = z
  .object({ name: z.string(), provider: z.string(), title: z.string(), description: z.string(), params: ParamSpecs })
  .openapi("ResourceType");
const ResourcePatch = z
  .object({
    config: Params.optional().openapi({ description: "The new configuration (validated, defaults applied)" }),
    description: z.string().optional(),
  })
  .openapi("ResourcePatch");
const ResourceBody = z
  .object({
    id: z.string().optional(),
    name: z.string().optional(),
    type: z.string(),
    config: Params.optional(),
    description: z.string().optional(),
    test: z.union([z.boolean(), z.string()]).optional(),
  })
  .openapi("NewResource");
const Resource = z
  .object({
    id: z.string(),
    name: z.string(),
    type: z.string(),
    config: Params,
    description: z.string(),
    attrs: z.string(),
    created_at: z.number().int(),
    status: z.union([z.boolean(), z.array(z.object({ node: z.string(), is_alive: z.boolean() }))]),
  })
  .openapi("Resource");
const RuleEvent = z
  .object({
    event: z.string(),
    title: z.object({ en: z.string(), zh: z.string() }),
    description: z.object({ en: z.string(), zh: z.string() }),
    columns: z.array(z.string()),
    test_columns: Params,
    sql_example: z.string(),
  })
  .openapi("RuleEvent");

/** Runs a service call, turning its expected failures into API errors. */
async function call<T>(f: () => T | Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (e instanceof RuleServiceError) throw new ApiError(e.status, e.status, e.message);
    throw e;
  }
}

const isTrue = (v: unknown) => v === true || v === "true";

export function ruleRoutes(t: RouteTable, d: ApiDeps): void {
  const s: RuleService = d.services.rules;
  const tag = "rules";

  t.add(
    {
      name: "create_rule",
      method: "post",
      path: "/rules",
      descr: "Create a rule (?test=true: test the SQL against a simulated event)",
      tag,
      query: TestQuery,
      body: RuleBody,
      response: envelope(Rule),
    },
    async ({ query, body }, c) => {
      if (isTrue(query.test) || isTrue(body.test)) {
        const r = s.testRule(body.rawsql ?? "", body.ctx);
        return c.json(r.ok ? ok(r.data) : { code: r.code, message: r.message }, 200);
      }
      return ok(await call(() => s.createRule({ ...body, rawsql: body.rawsql ?? "" })));
    },
  );
  const str = (description: string) => z.string().optional().openapi({ description });
  const RuleFilters = pageQuery(d.maxRowLimit).extend({
    enabled: queryBool("Only enabled (true) or disabled (false) rules"),
    for: str("A FROM source of the rule, exactly"),
    _like_id: str("Substring of the rule id"),
    _like_for: str("Substring of a FROM source"),
    _match_for: str("Topic filter a FROM source matches"),
    _like_description: str("Substring of the description"),
  });
  t.add(
    {
      name: "list_rules",
      method: "get",
      path: "/rules",
      descr: "List rules, newest first (paginated, with filters)",
      tag,
      query: RuleFilters,
      response: pagedEnvelope(Rule),
    },
    async ({ query: q }) =>
      paged(
        await s.listRules({
          enabled: q.enabled === undefined ? undefined : q.enabled === "true",
          for: q.for,
          like_id: q._like_id,
          like_for: q._like_for,
          match_for: q._match_for,
          like_description: q._like_description,
        }),
        pageOf(d, q),
      ),
  );
  t.add(
    {
      name: "show_rule",
      method: "get",
      path: "/rules/{id}",
      descr: "Show a rule",
      tag,
      params: IdParam,
      response: envelope(Rule),
    },
    async ({ params }) => ok(await call(() => s.getRule(params.id))),
  );
  t.add(
    {
      name: "update_rule",
      method: "put",
      path: "/rules/{id}",
      descr: "Update a rule (rawsql, actions, description, enabled, on_action_failed)",
      tag,
      params: IdParam,
      body: RulePatch,
      response: envelope(Rule),
    },
    async ({ params, body }) => ok(await call(() => s.updateRule(params.id, body))),
  );
  t.add(
    {
      name: "reset_rule_metrics",
      method: "put",
      path: "/rules/{id}/reset_metrics",
      descr: "Reset a rule's metrics and its actions' (on this node)",
      tag,
      params: IdParam,
      response: Done,
    },
    async ({ params }) => {
      await call(() => s.resetMetrics(params.id));
      return ok();
    },
  );
  t.add(
    {
      name: "delete_rule",
      method: "delete",
      path: "/rules/{id}",
      descr: "Delete a rule",
      tag,
      params: IdParam,
      response: Done,
    },
    async ({ params }) => {
      await call(() => s.deleteRule(params.id));
      return ok();
    },
  );

  t.add(
    {
      name: "list_actions",
      method: "get",
      path: "/actions",
      descr: "List actions (?for=<hook>: those usable on it)",
      tag: "actions",
      query: ForQuery,
      response: envelope(z.array(Action)),
    },
    ({ query }) => ok(s.listActions(query.for)),
  );
  t.add(
    {
      name: "show_action",
      method: "get",
      path: "/actions/{name}",
      descr: "Show an action",
      tag: "actions",
      params: NameParam,
      response: envelope(Action),
    },
    async ({ params }) => ok(await call(() => s.getAction(params.name))),
  );

  const rt = "resource_types";
  t.add(
    {
      name: "list_resource_types",
      method: "get",
      path: "/resource_types",
      descr: "List resource types",
      tag: rt,
      response: envelope(z.array(ResourceType)),
    },
    () => ok(s.listResourceTypes()),
  );
  t.add(
    {
      name: "show_resource_type",
      method: "get",
      path: "/resource_types/{type}",
      descr: "Show a resource type",
      tag: rt,
      params: TypeParam,
      response: envelope(ResourceType),
    },
    async ({ params }) => ok(await call(() => s.getResourceType(params.type))),
  );
  t.add(
    {
      name: "list_actions_of_resource_type",
      method: "get",
      path: "/resource_types/{type}/actions",
      descr: "List the actions of a resource type",
      tag: rt,
      params: TypeParam,
      response: envelope(z.array(Action)),
    },
    async ({ params }) => ok(await call(() => s.actionsOfType(params.type))),
  );
  t.add(
    {
      name: "list_resources_of_type",
      method: "get",
      path: "/resource_types/{type}/resources",
      descr: "List the resources of a resource type",
      tag: rt,
      params: TypeParam,
      response: envelope(z.array(Resource)),
    },
    async ({ params }) => ok(await call(() => s.resourcesOfType(params.type))),
  );

  const rs = "resources";
  t.add(
    {
      name: "create_resource",
      method: "post",
      path: "/resources",
      descr: "Create a resource (?test=true: connect once, store nothing)",
      tag: rs,
      query: TestQuery,
      body: ResourceBody,
      response: envelope(Resource),
    },
    async ({ query, body }) => {
      const test = isTrue(query.test) || isTrue(body.test);
      const r = await call(() => s.createResource(body, test));
      return r === undefined ? ok() : ok(r);
    },
  );
  t.add(
    {
      name: "list_resources",
      method: "get",
      path: "/resources",
      descr: "List resources",
      tag: rs,
      response: envelope(z.array(Resource)),
    },
    () => ok(s.listResources()),
  );
  t.add(
    {
      name: "show_resource",
      method: "get",
      path: "/resources/{id}",
      descr: "Show a resource",
      tag: rs,
      params: IdParam,
      response: envelope(Resource),
    },
    async ({ params }) => ok(await call(() => s.getResource(params.id))),
  );
  t.add(
    {
      name: "start_resource",
      method: "post",
      path: "/resources/{id}",
      descr: "Start (restart) a resource",
      tag: rs,
      params: IdParam,
      response: Done,
    },
    async ({ params }) => {
      await call(() => s.startResource(params.id));
      return ok();
    },
  );
  t.add(
    {
      name: "update_resource",
      method: "put",
      path: "/resources/{id}",
      descr: "Update a resource (config, description) and restart it",
      tag: rs,
      params: IdParam,
      body: ResourcePatch,
      response: envelope(Resource),
    },
    async ({ params, body }) => ok(await call(() => s.updateResource(params.id, body))),
  );
  t.add(
    {
      name: "delete_resource",
      method: "delete",
      path: "/resources/{id}",
      descr: "Delete a resource (refused while enabled rules use it)",
      tag: rs,
      params: IdParam,
      response: Done,
    },
    async ({ params }) => {
      await call(() => s.deleteResource(params.id));
      return ok();
    },
  );
  t.add(
    {
      name: "resource_status",
      method: "get",
      path: "/resource_status/{id}",
      descr: "Liveness of a resource on this node",
      tag: rs,
      params: IdParam,
      response: envelope(z.object({ is_alive: z.boolean() })),
    },
    async ({ params }) => ok(await call(() => s.resourceStatus(params.id))),
  );
  t.add(
    {
      name: "list_rule_events",
      method: "get",
      path: "/rule_events",
      descr: "List the rule events with their columns and an example SQL",
      tag: "rule_events",
      response: envelope(z.array(RuleEvent)),
    },
    () => ok(s.ruleEvents()),
  );
}
