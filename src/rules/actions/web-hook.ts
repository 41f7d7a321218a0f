// The web hook actions, bound to a `web_hook` resource: `data_to_webserver` (4.3+: method, path
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are templates with ${var} placeholders
// and headers of the request, a body template; empty body = the selected data as JSON) and the
// 3.x pair the spec names, `web_hook:event_action` (`template`: an object whose string values are
// templates; absent = the selected data) and `web_hook:publish_action` (the selected data),
// which use the resource's method and headers.

import type { ParamSpec } from "../engine/records.ts";
import type { WebHookResource } from "../resources/web-hook.ts";
import { compileTemplate, type Template } from "../runtime/placeholders.ts";
import { jsonEncode, type Row } from "../runtime/values.ts";
import { type ActionContext, type ActionDef, ActionError } from "./types.ts";

const RESOURCE: ParamSpec = {
  type: "string",
  required: true,
  title: "Resource ID",
  description: "Bind a resource to this action",
  order: 0,
};

function resourceOf(ctx: ActionContext): WebHookResource {
  const r = ctx.resource();
  if (r === undefined || r.type !== "web_hook") throw new ActionError("resource not available on this node");
  return r as WebHookResource;
}

export const dataToWebserverAction: ActionDef = {
  name: "data_to_webserver",
  app: "svc_web_hook",
  category: "data_forward",
  for: "$any",
  types: ["web_hook"],
  title: "Data to Web Server",
  description: "Forward Messages to Web Server",
  params: {
    $resource: RESOURCE,
    method: {
      type: "string",
      required: false,
      enum: ["POST", "PUT", "GET", "DELETE"],
      default: "POST",
      order: 1,
      title: "Method",
      description: "HTTP method (default POST)",
    },
    path: {
      type: "string",
      required: false,
      default: "",
      order: 2,
      title: "Path",
      description: "Appended to the resource URL; ${var} placeholders allowed",
    },
    headers: {
      type: "object",
      required: false,
      default: { "content-type": "application/json" },
      order: 3,
      title: "Headers",
      description: "Request headers (values may use ${var})",
    },
    body: {
      type: "string",
      required: false,
      default: "",
      input: "textarea",
      order: 4,
      title: "Body",
      description: "Body template; empty: all selected fields as JSON",
    },
  },
  create(params, ctx) {
    const method = String(params.method ?? "POST").toUpperCase();
    const path = compileTemplate(String(params.path ?? ""));
    const hdrSrc = (params.headers ?? { "content-type": "application/json" }) as Record<string, unknown>;
    const headers = Object.entries(hdrSrc).map(([k, v]) => [k.toLowerCase(), compileTemplate(String(v))] as const);
    const bodyText = String(params.body ?? "");
    const body: Template = bodyText === "" ? (d) => jsonEncode(d) : compileTemplate(bodyText);
    return async (data) => {
      const h: Record<string, string> = {};
      for (const [k, t] of headers) h[k] = t(data);
      const trace = ctx.env.traceHeaders();
      if (trace !== undefined) Object.assign(h, trace);
      await resourceOf(ctx).request({ method, path: path(data), headers: h, body: body(data) });
    };
  },
};

function renderObject(tmpl: unknown, data: Row): unknown {
  if (typeof tmpl === "string") return compileTemplate(tmpl)(data);
  if (Array.isArray(tmpl)) return tmpl.map((x) => renderObject(x, data));
  if (typeof tmpl === "object" && tmpl !== null) {
    const out: Row = {};
    for (const [k, v] of Object.entries(tmpl)) out[k] = renderObject(v, data);
    return out;
  }
  return tmpl;
}

async function postJson(ctx: ActionContext, body: string): Promise<void> {
  const r = resourceOf(ctx);
  const trace = ctx.env.traceHeaders();
  await r.request({
    method: r.cfg.method,
    path: "",
    headers:
      trace === undefined ? { "content-type": "application/json" } : { "content-type": "application/json", ...trace },
    body,
  });
}

export const webHookEventAction: ActionDef = {
  name: "web_hook:event_action",
  app: "svc_web_hook",
  category: "data_forward",
  for: "$events",
  types: ["web_hook"],
  title: "Data to Web Server",
  description: "Forward Events to Web Server",
  params: {
    $resource: RESOURCE,
    template: {
      type: "object",
      required: false,
      order: 1,
      title: "Payload Template",
      description: "A JSON object whose string values are ${var} templates; absent: the selected data",
    },
  },
  create(params, ctx) {
    const tmpl = params.template;
    return (data) => postJson(ctx, jsonEncode(tmpl === undefined || tmpl === null ? data : renderObject(tmpl, data)));
  },
};

export const webHookPublishAction: ActionDef = {
  name: "web_hook:publish_action",
  app: "svc_web_hook",
  category: "data_forward",
  for: "message.publish",
  types: ["web_hook"],
  title: "Data to Web Server",
  description: "Forward Messages to Web Server",
  params: { $resource: RESOURCE },
  create(_params, ctx) {
    return (data) => postJson(ctx, jsonEncode(data));
  },
};
