// svc_auth_username: authentication by user name and password (spec section 5, emqx-facts §5).
// Entries live in the cluster store under `auth/username/`, are managed through the service layer
// (`/auth_username`), and may be preloaded from `<plugins.etc_dir>/svc_auth_username.conf`:
//   auth.user.1.username = admin
//   auth.user.1.password = public
// New passwords are hashed with `auth.user.password_hash` (svc.conf). A client without a user name
// is ignored (the next provider decides). Metrics `auth.username.success|failure|ignore`.
// Setting a password also derives the user's SCRAM-SHA-256 keys (`auth.user.scram_iterations`),
// so the same user may log in with the 5.0 enhanced authentication method `SCRAM-SHA-256`.

import { CredentialProvider, type CredentialProviderDeps, type CredentialProviderSpec } from "./credential-provider.ts";

export const USERNAME_PLUGIN = "svc_auth_username";

export const USERNAME_SPEC: CredentialProviderSpec = {
  name: USERNAME_PLUGIN,
  description: "Authentication with user name and password",
  kind: "username",
  prefix: "auth.user",
  idField: "username",
  metric: "auth.username",
  idOf: (_client, creds) => creds.username,
  scram: true,
};

export function usernameProvider(deps: CredentialProviderDeps): CredentialProvider {
  return new CredentialProvider(USERNAME_SPEC, deps);
}
