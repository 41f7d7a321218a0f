// Failures of svc_ctl: each becomes one line on stderr and a non-zero exit code.

/** A command failed (node down, refused request, unknown object): exit 1. */
export class CliError extends Error {
  override name = "CliError";
}

/** The API answered 404 for the object asked about: the family's `Not Found.`, exit 1. */
export class NotFoundError extends CliError {
  override name = "NotFoundError";
  constructor(readonly detail = "") {
    super("Not Found.");
  }
}

/** Bad arguments: the reason, then the group's usage lines; exit 2. */
export class UsageError extends Error {
  override name = "UsageError";
}
