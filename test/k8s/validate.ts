// Validation of rendered Kubernetes objects: the kubernetes-models schemas (required fields,
// types, enums) plus a walk over the @kubernetes/client-node model metadata that catches unknown
// (misspelt) fields, which the schemas let through. Custom resources (ServiceMonitor, cert-manager
// Certificate) have no model here: their apiVersion, kind and required fields are checked by hand.

import * as k8s from "@kubernetes/client-node";
import * as appsV1 from "kubernetes-models/apps/v1";
import * as autoscalingV2 from "kubernetes-models/autoscaling/v2";
import * as policyV1 from "kubernetes-models/policy/v1";
import * as rbacV1 from "kubernetes-models/rbac.authorization.k8s.io/v1";
import * as coreV1 from "kubernetes-models/v1";
import type { K8sObject } from "./render.ts";

type KubeModel = new (data: never) => { validate(): void };
/** The kubernetes-models groups rendered manifests may use. */
const GROUPS: Record<string, Record<string, unknown>> = {
  v1: coreV1,
  "apps/v1": appsV1,
  "autoscaling/v2": autoscalingV2,
  "policy/v1": policyV1,
  "rbac.authorization.k8s.io/v1": rbacV1,
};

interface AttributeType {
  baseName: string;
  type: string;
}
type ModelClass = { attributeTypeMap?: AttributeType[] };
const models = k8s as unknown as Record<string, ModelClass | undefined>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Problems of `value` against client-node type `type` (a class name, Array<T>, a map, a primitive). */
export function unknownFields(value: unknown, type: string, path: string): string[] {
  if (value === null || value === undefined) return [];
  const arr = /^Array<(.+)>$/.exec(type);
  if (arr !== null) {
    if (!Array.isArray(value)) return [`${path}: expected an array`];
    return value.flatMap((v, i) => unknownFields(v, arr[1], `${path}[${i}]`));
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map !== null) {
    if (!isObject(value)) return [`${path}: expected a map`];
    return Object.entries(value).flatMap(([k, v]) => unknownFields(v, map[1], `${path}.${k}`));
  }
  switch (type) {
    case "any":
    case "object":
      return [];
    case "string":
    case "Date":
      return typeof value === "string" ? [] : [`${path}: expected a string, got ${JSON.stringify(value)}`];
    case "number":
      return typeof value === "number" ? [] : [`${path}: expected a number, got ${JSON.stringify(value)}`];
    case "boolean":
      return typeof value === "boolean" ? [] : [`${path}: expected a boolean, got ${JSON.stringify(value)}`];
    case "IntOrString":
      return typeof value === "string" || typeof value === "number" ? [] : [`${path}: expected int or string`];
  }
  const cls = models[type];
  if (cls?.attributeTypeMap === undefined) {
    // String enums have no model class.
    return typeof value === "string" ? [] : [`${path}: no model for type ${type}`];
  }
  if (!isObject(value)) return [`${path}: expected an object (${type})`];
  const fields = new Map(cls.attributeTypeMap.map((a) => [a.baseName, a.type]));
  return Object.entries(value).flatMap(([k, v]) => {
    const t = fields.get(k);
    return t === undefined ? [`${path}.${k}: unknown field of ${type}`] : unknownFields(v, t, `${path}.${k}`);
  });
}

/** `apps/v1` + `StatefulSet` -> `V1StatefulSet`; `autoscaling/v2` -> `V2...`. */
function modelName(apiVersion: string, kind: string): string {
  const version = apiVersion.split("/").at(-1) ?? "";
  return version.charAt(0).toUpperCase() + version.slice(1) + kind;
}

const CUSTOM: Record<string, (o: K8sObject) => string[]> = {
  "monitoring.coreos.com/v1/ServiceMonitor": (o) => {
    const errs: string[] = [];
    if (!isObject(o.spec?.selector)) errs.push("spec.selector is required");
    if (!Array.isArray(o.spec?.endpoints) || o.spec.endpoints.length === 0) errs.push("spec.endpoints is required");
    for (const e of o.spec?.endpoints ?? []) {
      if (typeof e.port !== "string") errs.push("endpoint port (name) is required");
      if (typeof e.path !== "string" || !e.path.startsWith("/")) errs.push("endpoint path must be absolute");
    }
    return errs;
  },
  "cert-manager.io/v1/Certificate": (o) => {
    const errs: string[] = [];
    if (typeof o.spec?.secretName !== "string" || o.spec.secretName === "") errs.push("spec.secretName is required");
    if (typeof o.spec?.issuerRef?.name !== "string" || o.spec.issuerRef.name === "")
      errs.push("spec.issuerRef.name is required");
    if (!Array.isArray(o.spec?.dnsNames) || o.spec.dnsNames.length === 0) errs.push("spec.dnsNames is required");
    return errs;
  },
};

/** Every problem of one object; [] when it is valid. */
export function validateObject(o: K8sObject): string[] {
  const id = `${o.kind}/${o.metadata?.name}`;
  if (typeof o.metadata?.name !== "string" || o.metadata.name === "") return [`${id}: metadata.name is required`];
  const custom = CUSTOM[`${o.apiVersion}/${o.kind}`];
  if (custom !== undefined) return custom(o).map((e) => `${id}: ${e}`);
  const errs: string[] = [];
  const Model = GROUPS[o.apiVersion]?.[o.kind] as KubeModel | undefined;
  if (Model === undefined) return [`${id}: unknown apiVersion/kind ${o.apiVersion} ${o.kind}`];
  try {
    new Model(o as never).validate();
  } catch (err) {
    errs.push(`${id}: ${(err as Error).message}`);
  }
  const name = modelName(o.apiVersion, o.kind);
  if (models[name]?.attributeTypeMap === undefined) errs.push(`${id}: no client-node model ${name}`);
  else errs.push(...unknownFields(o, name, id));
  return errs;
}

/** Every problem of every object. */
export function validateAll(objs: K8sObject[]): string[] {
  return objs.flatMap(validateObject);
}
