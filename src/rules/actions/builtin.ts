// The built-in actions (emqx-facts §2): `inspect` (prints the selected data, the event and the
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are templates with ${var} placeholders
// params to the log), `do_nothing` (always succeeds) and `republish` (a new MQTT message from
// templates, with a loop guard: a message a rule republished never triggers that rule again).

import { validateTopicName } from "../../mqtt/topic.ts";
import type { ParamSpec } from "../engine/records.ts";
import { getPath } from "../runtime/paths.ts";
import { compileTemplate, type Template } from "../runtime/placeholders.ts";
import { jsonEncode, type Row } from "../runtime/values.ts";
import { type ActionDef, ActionError } from "./types.ts";

const str = (title: string, description: string, extra: Partial<ParamSpec> = {}): ParamSpec => ({
  type: "string",
  required: false,
  title,
  description,
  ...extra,
});

export const inspectAction: ActionDef = {
  name: "inspect",
  app: "svc_rule_engine",
  category: "debug",
  for: "$any",
  types: [],
  title: "Inspect (debug)",
  description: "Inspect the details of action params for debug purpose",
  params: {},
  create(params, ctx) {
    return (data, event) => {
      ctx.env.info({ rule: ctx.ruleId, action: ctx.actionId, selected: data, envs: event, params }, "rule inspect");
    };
  },
};

export const doNothingAction: ActionDef = {
  name: "do_nothing",
  app: "svc_rule_engine",
  category: "debug",
  for: "$any",
  types: [],
  title: "Do Nothing (debug)",
  description: "This action does nothing",
  params: {},
  create() {
    return () => undefined;
  },
};

const REPUBLISH_PARAMS: Record<string, ParamSpec> = {
  target_topic: str("Target Topic", "To which topic the message will be republished", {
    required: true,
    format: "topic",
    default: "repub/to/${clientid}",
    order: 1,
  }),
  target_qos: {
    type: "number",
    required: false,
    enum: [-1, 0, 1, 2, "${qos}"],
    default: 0,
    order: 2,
    title: "Target QoS",
    description: "The QoS Level to be used when republishing the message (-1: that of the original message)",
  },
  target_retain: {
    type: "boolean",
    required: false,
    default: false,
    order: 3,
    title: "Target Retain",
    description: "The Retain flag to be used when republishing the message (true, false or ${flags.retain})",
  },
  payload_tmpl: str(
    "Payload Template",
    "The payload template, ${var} placeholders (empty: the selected data as JSON)",
    {
      default: "${payload}",
      input: "textarea",
      order: 4,
    },
  ),
};

function qosOf(spec: unknown, data: Row, ctx: Row): 0 | 1 | 2 {
  let q: unknown = spec;
  if (typeof spec === "string") q = Number(compileTemplate(spec)(data));
  if (q === -1) q = data.qos ?? ctx.qos;
  if (typeof q === "string") q = Number(q);
  if (q === 0 || q === 1 || q === 2) return q;
  throw new ActionError(`bad target_qos: ${String(spec)}`);
}

function retainOf(spec: unknown, data: Row): boolean {
  if (typeof spec === "boolean") return spec;
  if (typeof spec === "string") {
    const t = compileTemplate(spec)(data);
    return t === "true" || t === "1";
  }
  return false;
}

export const republishAction: ActionDef = {
  name: "republish",
  app: "svc_rule_engine",
  category: "data_forward",
  for: "$any",
  types: [],
  title: "Republish",
  description: "Republish a MQTT message to another topic",
  params: REPUBLISH_PARAMS,
  validate(p) {
    const t = p.target_topic as string;
    if (t.includes("${")) return null;
    if (!validateTopicName(t, 0)) return `Invalid target_topic: ${t}`;
    const q = p.target_qos;
    if (q !== undefined && q !== null && ![-1, 0, 1, 2].includes(q as number) && typeof q !== "string")
      return "target_qos must be -1, 0, 1, 2 or ${qos}";
    return null;
  },
  create(params, ctx) {
    const topic = compileTemplate(String(params.target_topic));
    const tmplText =
      params.payload_tmpl === undefined || params.payload_tmpl === null ? "${payload}" : String(params.payload_tmpl);
    const payload: Template = tmplText === "" ? (d) => jsonEncode(d) : compileTemplate(tmplText);
    // `${payload}` alone keeps binary payloads byte for byte.
    const whole = /^\$\{\s*([^}]+?)\s*\}$/.exec(tmplText)?.[1]?.split(".");
    const qosSpec = params.target_qos ?? 0;
    const retainSpec = params.target_retain ?? false;
    return (data, event) => {
      const target = topic(data);
      if (target === "" || target.includes("+") || target.includes("#"))
        throw new ActionError(`bad target topic: ${target}`);
      const raw = whole === undefined ? undefined : getPath(data, whole);
      const body = raw instanceof Uint8Array ? Buffer.from(raw) : Buffer.from(payload(data), "utf8");
      ctx.env.publish(
        {
          topic: target,
          payload: body,
          qos: qosOf(qosSpec, data, event),
          retain: retainOf(retainSpec, data),
        },
        ctx.ruleId,
      );
    };
  },
};
