import { DispatchError } from '../errors';
import type { ResolvedTool } from '../registry';
import { mayHaveRun } from './refusals';

/**
 * The next step after a side-effecting call's failure that its idempotency record keeps: the same
 * call is replayed, not run, until the record expires, so calling again as it is cannot help.
 */
export function keptFailureSuggestion(tool: ResolvedTool): string {
  const changed = tool.keyFields.length === 0 ? 'different arguments' : `different values at ${tool.keyFields.join(', ')}`;
  return `The same call again returns this same answer, without reaching the tool, until its idempotency record expires (${tool.idempotencyTtlSeconds} s). Only a call with ${changed} (another idempotency key) reaches the tool before then: read the error message, and check whether the action took effect before making one.`;
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
    if (error.suggestion === undefined) return mayHaveRun(error);
    return retryable ? notRecoverable(error, error.suggestion) : error;
  }
  return error.phase === 'after' && kept && retryable ? notRecoverable(error, keptFailureSuggestion(tool)) : error;
}

/** `error` with nothing that invites calling again as it is, and `suggestion`. */
function notRecoverable(error: DispatchError, suggestion: string): DispatchError {
  return error.retold(error.message, { recoverable: false, suggestion, retryAfterMs: undefined, notRetriedWithinTurn: false });
}
