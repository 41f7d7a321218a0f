// The errors a ClusterStore reports. Callers branch on the class: StoreUnavailableError means
// "the back end could not be reached, retry later, keep serving from caches"; the others are final.

export class StoreError extends Error {
  override name = "StoreError";
}

/** The back end (etcd) did not answer or refused: retry later. `cause` holds the client's error. */
export class StoreUnavailableError extends StoreError {
  override name = "StoreUnavailableError";
}

/** The store was closed by its owner. */
export class StoreClosedError extends StoreError {
  override name = "StoreClosedError";
  constructor(options?: ErrorOptions) {
    super("cluster store is closed", options);
  }
}

/** A put named a lease that has expired or was revoked: its keys are gone too. */
export class LeaseNotFoundError extends StoreError {
  override name = "LeaseNotFoundError";
}

/** A watch asked for history the store no longer keeps: read again with range(), then watch. */
export class StoreCompactedError extends StoreError {
  override name = "StoreCompactedError";
}
