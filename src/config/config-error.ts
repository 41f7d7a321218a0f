// The one error the configuration throws: every problem found at load, each naming where it came
// from (`etc/svc.conf:42: listener.tcp.external: invalid bind "x"`, `environment SVC_X: ...`).

export class ConfigError extends Error {
  override readonly name = "ConfigError";
  /** One line per problem, in the order found. */
  readonly issues: readonly string[];

  constructor(issues: string | readonly string[], options?: ErrorOptions) {
    const list = typeof issues === "string" ? [issues] : issues;
    super(
      list.length === 1 ? list[0] : `${list.length} configuration errors:\n${list.map((i) => `  ${i}`).join("\n")}`,
      options,
    );
    this.issues = list;
  }
}
