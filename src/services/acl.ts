// The ACL for the API and CLI (`acl reload`, `acl cache-clean all`): reload the rule file at run
// time without dropping clients (every ACL cache is emptied; a file that does not parse leaves the
// old rules in force and reports file:line), and empty every client's ACL cache. A single client's
// cache is read and cleared through ClientService.

import type { Acl } from "../auth/acl.ts";

export type AclReload = { rules: number } | { error: string };

export class AclService {
  constructor(private readonly acl: Acl) {}

  get file(): string {
    return this.acl.file;
  }

  /** Number of rules of the file in force. */
  get rules(): number {
    return this.acl.ruleCount;
  }

  reload(): AclReload {
    try {
      return this.acl.reload();
    } catch (err) {
      return { error: err instanceof Error ? err.message : String(err) };
    }
  }

  clearAllCaches(): void {
    this.acl.caches.clearAll();
  }
}
