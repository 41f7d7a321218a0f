// Node names of the pods listed by the headless Service (emqx-facts §6.3), and the namespace the
// Service lives in. Pure functions: no Kubernetes client here.

import { existsSync, readFileSync } from "node:fs";

export type AddressType = "ip" | "dns" | "hostname";

export interface NameSettings {
  addressType: AddressType;
  appName: string;
  serviceName: string;
  namespace: string;
  suffix: string;
}

/** One endpoint of an EndpointSlice, as far as naming goes. */
export interface EndpointAddress {
  address: string;
  /** The pod's hostname (StatefulSet pods behind their governing Service), else undefined. */
  hostname?: string;
  /** The pod's name (targetRef), used when the endpoint carries no hostname. */
  podName?: string;
}

/**
 * hostname: `<app>@<hostname>.<service>.<namespace>.<suffix>`; ip: `<app>@<ip>`; dns:
 * `<app>@<ip with dashes>.<namespace>.<suffix>`. Without a suffix the trailing part is left out.
 * Null when the endpoint has no hostname (nor pod name) for the hostname form.
 */
export function nodeNameOf(ep: EndpointAddress, s: NameSettings): string | null {
  const tail = (host: string): string => (s.suffix === "" ? host : `${host}.${s.suffix}`);
  switch (s.addressType) {
    case "ip":
      return `${s.appName}@${ep.address}`;
    case "dns":
      return `${s.appName}@${tail(`${ep.address.replace(/[.:]/g, "-")}.${s.namespace}`)}`;
    case "hostname": {
      const host = ep.hostname ?? ep.podName;
      if (host === undefined || host === "") return null;
      return `${s.appName}@${tail(`${host}.${s.serviceName}.${s.namespace}`)}`;
    }
  }
}

export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** cluster.k8s.namespace, else the service account's namespace file, else POD_NAMESPACE, else default. */
export function resolveNamespace(
  configured: string,
  env: NodeJS.ProcessEnv = process.env,
  file = `${SERVICE_ACCOUNT_DIR}/namespace`,
): string {
  if (configured !== "") return configured;
  if (existsSync(file)) {
    const ns = readFileSync(file, "utf8").trim();
    if (ns !== "") return ns;
  }
  const fromEnv = env.POD_NAMESPACE?.trim();
  return fromEnv === undefined || fromEnv === "" ? "default" : fromEnv;
}
