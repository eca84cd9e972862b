
/**
 * Why a store step failed, as far as the store could tell (StoreUnavailableError.reason):
 * `permission`, its backend refused the command for its user's rights (a Redis ACL's NOPERM);
 * `out-of-memory`, it refused to write for want of memory (Redis's OOM under noeviction);
 * `no-answer`, it did not answer in time (the step may still land); `unreachable`, the
 * connection was down or lost; `not-writable`, it answered but takes no writes for now (a Redis
 * replica after a failover, a master without its replicas, loading its data, a Cluster slot
 * down or migrating, a failed snapshot); `full`, it holds as many claims in progress as it may (the
 * memory store's maxClaims). Absent for anything else.
 */
export type StoreFailureReason = 'permission' | 'out-of-memory' | 'no-answer' | 'unreachable' | 'not-writable' | 'full';

/** The store could not be reached or failed; side-effecting calls fail closed on it. */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  /** Why, when the store could tell (see storeRefusal): what the caller is told. */
  readonly reason?: StoreFailureReason;
  constructor(message: string, options?: ErrorOptions & { readonly reason?: StoreFailureReason }) {
    super(message, options);
    if (options?.reason !== undefined) this.reason = options.reason;
  }
}

/** What the caller of a side-effecting call is told, by why its store refused its claim. */
const CLAIM_REFUSALS: Readonly<Record<StoreFailureReason | 'unknown', string>> = {
  permission: 'the idempotency store refused to record this call for lack of permission (its ACL does not allow the write), so this side-effecting call was not executed',
  'out-of-memory': 'the idempotency store is out of memory and refused to record this call, so this side-effecting call was not executed',
  'no-answer': 'the idempotency store did not answer in time to record this call, so this side-effecting call was not executed',
  unreachable: 'the idempotency store could not be reached to record this call, so this side-effecting call was not executed',
  'not-writable': 'the idempotency store takes no writes for now (failing over, or loading its data) and could not record this call, so this side-effecting call was not executed',
  full: 'the idempotency store holds as many calls in progress as it may and could not record this call (try again once some end), so this side-effecting call was not executed',
  unknown: 'the idempotency store could not record this call, so this side-effecting call was not executed',
};

/**
 * The message of a side-effecting call whose claim the store refused (STORE_UNAVAILABLE): why,
 * when the store could tell, naming no key, user or server (those are in the log).
 */
export const claimRefusedMessage = (error: StoreUnavailableError): string => CLAIM_REFUSALS[error.reason ?? 'unknown'];
