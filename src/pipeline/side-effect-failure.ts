import type { DispatchError } from '../errors';
import type { ResolvedTool } from '../registry';

/** What makes another idempotency key for `tool`: its key fields' values, else any argument. */
const anotherKey = (tool: ResolvedTool) => `${tool.keyFields.length === 0 ? 'different arguments' : `different values at ${tool.keyFields.join(', ')}`} (another idempotency key)`;

/**
 * The next step after a side-effecting call's failure that its idempotency record keeps: the same
 * call is replayed, not run, until the record expires, so calling again as it is cannot help.
 */
export function keptFailureSuggestion(tool: ResolvedTool): string {
  return `The same call again returns this same answer, without reaching the tool, until its idempotency record expires (${tool.idempotencyTtlSeconds} s). Only a call with ${anotherKey(tool)} reaches the tool before then: read the error message, and check whether the action took effect before making one.`;
}

/**
 * The next step after a side-effecting call cut off while it ran (its tool's timeout, a lost
 * connection or worker): its record says OUTCOME_UNKNOWN, so the same call is refused, not run,
 * until dispatch learns the outcome (a worker's late answer) or the record expires. Before, "verify
 * its effect before calling again" read as if the same call could be made once verified.
 */
export function mayHaveRunSuggestion(tool: ResolvedTool): string {
  return `The call may or may not have taken effect: verify its effect (for example by reading the current state) before anything else. The same call again is answered OUTCOME_UNKNOWN, without reaching the tool, until its idempotency record expires (${tool.idempotencyTtlSeconds} s); only a call with ${anotherKey(tool)} reaches the tool before then, so make one only if the action did not take effect.`;
}

/** The next step after an OUTCOME_UNKNOWN refusal: as {@link mayHaveRunSuggestion}, of the earlier call. */
export function unknownOutcomeSuggestion(tool: ResolvedTool): string {
  return `An identical earlier call may or may not have taken effect: verify its effect (for example by reading the current state). This same call is answered so, without reaching the tool, until that call's idempotency record expires (at most ${tool.idempotencyTtlSeconds} s after it); only a call with ${anotherKey(tool)} reaches the tool before then, so make one only if the action did not take effect.`;
}

/**
 * A failure while a side-effecting tool ran (a reset connection, a worker gone, an answer that
 * could not be read), told as what it is: the call may or may not have taken effect, so calling
 * again as it is may do it twice (DESIGN section 4). Not recoverable by calling again.
 */
export function mayHaveRun(error: DispatchError, tool: ResolvedTool): DispatchError {
  return error.retold(error.message, { phase: 'during', recoverable: false, suggestion: mayHaveRunSuggestion(tool), retryAfterMs: undefined, notRetriedWithinTurn: false });
}

/**
 * A side-effecting tool's failure as the model must read it (DESIGN sections 4 and 5). DURING, it
 * may have taken effect: never recoverable, whatever its executor (or the replica that relayed it)
 * said, with the executor's suggestion or else mayHaveRun's. AFTER, kept by the idempotency record
 * (`kept`: the attempt held the claim), a transient failure (a 5xx, an MCP internal error) is
 * replayed for the record's TTL rather than run again: it is not recoverable, carries no
 * retry_after_ms, and its suggestion says what does reach the tool. Others as they are.
 */
export function sideEffectFailure(error: DispatchError, tool: ResolvedTool, kept: boolean): DispatchError {
  const retryable = error.recoverable || error.retryAfterMs !== undefined;
  if (error.phase === 'during') {
    if (error.suggestion === undefined) return mayHaveRun(error, tool);
    return retryable ? notRecoverable(error, error.suggestion) : error;
  }
  return error.phase === 'after' && kept && retryable ? notRecoverable(error, keptFailureSuggestion(tool)) : error;
}

/** `error` with nothing that invites calling again as it is, and `suggestion`. */
function notRecoverable(error: DispatchError, suggestion: string): DispatchError {
  return error.retold(error.message, { recoverable: false, suggestion, retryAfterMs: undefined, notRetriedWithinTurn: false });
}
