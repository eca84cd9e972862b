import { ReplyError } from 'ioredis';
import { StoreUnavailableError } from '../store';
import type { StoreFailureReason } from '../store-refusal';

/**
 * Runs one store step against Redis with a deadline: resolves with its reply, or rejects with a
 * StoreUnavailableError when Redis fails, refuses (disconnected) or has not answered in `timeoutMs`.
 */
export function storeCall<T>(what: string, timeoutMs: number, run: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new StoreUnavailableError(`redis did not answer ${what} within ${timeoutMs} ms`, { reason: 'no-answer' })), timeoutMs);
    let pending: Promise<T>;
    try {
      pending = run();
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        const message = error instanceof Error ? error.message : String(error);
        reject(new StoreUnavailableError(`redis failed ${what}: ${message}`, { cause: error, reason: failureReason(error) }));
      },
    );
  });
}

/**
 * Whether a step that failed got Redis's answer, an error reply (out of memory, NOPERM, READONLY, a
 * script's error): Redis ran none of the command, or a script up to the command that failed. A
 * step with no answer (timed out, connection lost) may still have run, or run later.
 */
export const answeredWithError = (error: unknown): boolean => error instanceof StoreUnavailableError && error.cause instanceof ReplyError;

/** An ACL refusal: the reply's code, or (Redis 7.0) a script's command the ACL denies, answered ERR (re-raised by the script, after its position). */
const PERMISSION = /^NOPERM\b|\bThe user executing the script can't\b/;
/** Out of memory under noeviction: the reply's code, or (before Redis 7) inside a script's error. */
const OUT_OF_MEMORY = /^OOM\b|\bOOM command not allowed\b/;
/** What ioredis rejects a command with when its connection is down, or was lost before the answer. */
const CONNECTION_DOWN = /^(Connection is closed|Stream isn't writeable)/;
/**
 * Redis answered but takes no writes for now: a replica (after a failover), a master short of its
 * min-replicas or with a replica serving no stale data, loading, a Cluster slot down or moving, a
 * failed snapshot under stop-writes-on-bgsave-error.
 */
const NOT_WRITABLE = /^(READONLY|MASTERDOWN|NOREPLICAS|LOADING|CLUSTERDOWN|TRYAGAIN|MISCONF)\b/;
/** ioredis's own commandTimeout, which may fire before storeCall's deadline. */
const NO_ANSWER = /^Command timed out/;

/**
 * Why a Redis command failed, to tell the caller (StoreFailureReason), from Redis's error reply or
 * ioredis's error: undefined for any other (a script's error, BUSY, a Cluster's redirections).
 */
export function failureReason(error: unknown): StoreFailureReason | undefined {
  if (!(error instanceof Error)) return undefined;
  if (error instanceof ReplyError) {
    if (PERMISSION.test(error.message)) return 'permission';
    if (OUT_OF_MEMORY.test(error.message)) return 'out-of-memory';
    return NOT_WRITABLE.test(error.message) ? 'not-writable' : undefined;
  }
  if (error.name === 'MaxRetriesPerRequestError' || CONNECTION_DOWN.test(error.message)) return 'unreachable';
  return NO_ANSWER.test(error.message) ? 'no-answer' : undefined;
}
