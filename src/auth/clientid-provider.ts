// svc_auth_clientid: authentication by client id and password (spec section 5, emqx-facts §5).
// Entries live in the cluster store under `auth/clientid/`, are managed through the service layer
// (`/auth_clientid`), and may be preloaded from `<plugins.etc_dir>/svc_auth_clientid.conf`:
//   auth.client.1.clientid = id
//   auth.client.1.password = passwd
// New passwords are hashed with `auth.client.password_hash` (svc.conf). Metrics
// `auth.clientid.success|failure|ignore`.

import { CredentialProvider, type CredentialProviderDeps, type CredentialProviderSpec } from "./credential-provider.ts";

export const CLIENTID_PLUGIN = "svc_auth_clientid";

export const CLIENTID_SPEC: CredentialProviderSpec = {
  name: CLIENTID_PLUGIN,
  description: "Authentication with client id and password",
  kind: "clientid",
  prefix: "auth.client",
  idField: "clientid",
  metric: "auth.clientid",
  idOf: (client) => client.clientId,
};

export function clientidProvider(deps: CredentialProviderDeps): CredentialProvider {
  return new CredentialProvider(CLIENTID_SPEC, deps);
}
