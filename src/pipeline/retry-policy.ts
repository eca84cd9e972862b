import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { kindName, type DispatchError } from '../errors';
import type { ResolvedRetry } from '../registry';

/** Inputs of the retry decision for one failed attempt. */
export interface RetryInput {
  readonly error: DispatchError;
  readonly readOnly: boolean;
  /** The attempt that just failed, counting from 1. */
  readonly attempt: number;
  readonly policy: ResolvedRetry;
}

/**
 * The decision: retry after `delayMs`, or return the failure, with the reason either way, and a
 * warning for the result when the model should hear why the call was not retried.
 */
export type RetryDecision =
  | { readonly retry: true; readonly delayMs: number; readonly reason: string }
  | { readonly retry: false; readonly reason: string; readonly warning?: string };

const NEVER_RETRIED_STATUS = new Set([400, 401, 403, 404, 422]);
const NEVER_RETRIED_KINDS = new Set([
  ErrorKind.INVALID_ARGUMENTS,
  ErrorKind.UNKNOWN_TOOL,
  ErrorKind.BLOCKED,
  ErrorKind.BREAKER_OPEN,
  ErrorKind.IN_PROGRESS,
  ErrorKind.OUTCOME_UNKNOWN,
  ErrorKind.LOOP_BLOCKED,
  ErrorKind.CANCELLED,
  ErrorKind.UNEXPECTED,
]);

/**
 * The second seed's decision tree, by failure phase: read-only tools retry transient failures;
 * side-effecting tools retry only failures before execution; validation errors, 400/401/403/404/422
 * and crashes never retry. Decided from kind, phase and effect, never from message text.
 */
export function decideRetry({ error, readOnly, attempt, policy }: RetryInput): RetryDecision {
  if (NEVER_RETRIED_KINDS.has(error.kind)) return { retry: false, reason: `${ErrorKind[error.kind]} is never retried` };
  if (error.httpStatus !== undefined && NEVER_RETRIED_STATUS.has(error.httpStatus)) {
    return { retry: false, reason: `HTTP ${error.httpStatus} is never retried` };
  }
  if (!readOnly && error.phase !== 'before') {
    return { retry: false, reason: `a side-effecting tool is not retried after a failure ${error.phase} execution` };
  }
  if (!error.recoverable) return { retry: false, reason: 'the failure is not transient' };
  if (error.notRetriedWithinTurn) return { retry: false, reason: 'the failure asks to be retried later, not within the turn' };
  if (attempt >= policy.maxAttempts) return { retry: false, reason: `all ${policy.maxAttempts} attempts used` };
  // A longer wait asked for (a tool's Retry-After, a rate limit's next turn) than the policy allows
  // between attempts: holding the turn that long (30 s for a 503 with no RPC deadline) is not what
  // max_backoff_ms promised. The call ends with its error, still recoverable, whose retry_after_ms
  // and suggestion say when to call again.
  if (error.retryAfterMs !== undefined && error.retryAfterMs > policy.maxBackoffMs) {
    const why = `the wait asked for (retry_after_ms ${error.retryAfterMs}) is longer than the tool's max_backoff_ms (${policy.maxBackoffMs})`;
    return { retry: false, reason: why, warning: `not retried: ${why}` };
  }
  // What failed, without its words (a RETRY event's reason: an operator reads it, a tool's answer may hold payload).
  const what = `${kindName(error.kind)}${error.httpStatus === undefined ? '' : `, HTTP ${error.httpStatus}`}`;
  return { retry: true, delayMs: backoffDelay(attempt, policy, error.retryAfterMs), reason: `transient failure (${what})` };
}

/**
 * Exponential backoff before attempt `attempt + 1`: initial x multiplier^(attempt-1), capped, plus
 * up to `jitter` of itself at random. A Retry-After from the tool wins when it is longer (decideRetry
 * retries only after one within max_backoff_ms).
 */
export function backoffDelay(attempt: number, policy: ResolvedRetry, retryAfterMs?: number, random = Math.random): number {
  const base = Math.min(policy.maxBackoffMs, policy.initialBackoffMs * policy.multiplier ** (attempt - 1));
  const delay = Math.round(base * (1 + policy.jitter * random()));
  return retryAfterMs !== undefined ? Math.max(delay, retryAfterMs) : delay;
}
