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
 * A side-effecting tool's failure as the model must read it (DESIGN sections 4 and 5). DURING
 * without a suggestion of the executor's: it may have taken effect (see mayHaveRun). AFTER, kept by
 * the idempotency record (`kept`: the attempt held the claim), a transient failure (a 5xx, an MCP
 * internal error) is replayed for the record's TTL rather than run again: it is not recoverable,
 * carries no retry_after_ms, and its suggestion says what does reach the tool. Others as they are.
 */
export function sideEffectFailure(error: DispatchError, tool: ResolvedTool, kept: boolean): DispatchError {
  if (error.phase === 'during') return error.suggestion === undefined ? mayHaveRun(error) : error;
  if (error.phase !== 'after' || !kept || (!error.recoverable && error.retryAfterMs === undefined)) return error;
  return new DispatchError(error.kind, error.message, {
    phase: 'after',
    recoverable: false,
    cause: error,
    httpStatus: error.httpStatus,
    suggestion: keptFailureSuggestion(tool),
  });
}
