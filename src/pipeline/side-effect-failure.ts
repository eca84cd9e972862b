import type { DispatchError } from '../errors';
import type { ResolvedTool } from '../registry';

/**
 * What the model is told of changing the arguments to get past a kept answer. Before, the text
 * named the values that make another idempotency key ("only a call with different values at
 * /card, /amount reaches the tool"): a probe's model, told a charge had failed, sent the card with
 * a leading space, and it reached the tool. Another key is another action, never a retry.
 */
const NOT_AROUND_IT = 'Do not change the arguments only to get past this answer: that makes another action, not a retry, and may do it twice';

/**
 * The next step after a side-effecting call's failure that its idempotency record keeps: the same
 * call is replayed, not run, until the record expires, so calling again as it is cannot help.
 */
export function keptFailureSuggestion(tool: ResolvedTool): string {
  return `The same call again returns this same answer, without reaching the tool, until its idempotency record expires (${tool.idempotencyTtlSeconds} s). Read the error message: if it names something to correct, the corrected call is a new action and reaches the tool. ${NOT_AROUND_IT}; otherwise check whether the action took effect and tell the user what failed.`;
}

/**
 * The next step after a side-effecting call cut off while it ran (its tool's timeout, a lost
 * connection or worker): its record says OUTCOME_UNKNOWN, so the same call is refused, not run,
 * until dispatch learns the outcome (a worker's late answer) or the record expires. Before, "verify
 * its effect before calling again" read as if the same call could be made once verified.
 */
export function mayHaveRunSuggestion(tool: ResolvedTool): string {
  return `The call may or may not have taken effect: verify its effect (for example by reading the current state) before anything else. The same call again is answered OUTCOME_UNKNOWN, without reaching the tool, until its idempotency record expires (${tool.idempotencyTtlSeconds} s). ${NOT_AROUND_IT}; if it did not take effect, tell the user.`;
}

/**
 * The next step after a side-effecting call cut off by its timeout after its tool answered, while
 * the answer was still being redacted (AttemptContext.lateAnswered): the action took effect, and
 * the answer replaces the call's OUTCOME_UNKNOWN mark once redacted (late-answer.ts). Before, the
 * model read mayHaveRunSuggestion's "may or may not have taken effect" and was sent to verify it.
 */
export function answeredSuggestion(tool: ResolvedTool): string {
  return `The action took effect: the tool answered, and its answer is recorded once redacted (seconds at most). The same call made again, as it is, is then answered with it, without reaching the tool (until then OUTCOME_UNKNOWN; the record lasts ${tool.idempotencyTtlSeconds} s). ${NOT_AROUND_IT}.`;
}

/** The next step after an OUTCOME_UNKNOWN refusal: as {@link mayHaveRunSuggestion}, of the earlier call. */
export function unknownOutcomeSuggestion(tool: ResolvedTool): string {
  return `An identical earlier call may or may not have taken effect: verify its effect (for example by reading the current state). This same call is answered so, without reaching the tool, until that call's idempotency record expires (at most ${tool.idempotencyTtlSeconds} s after it). ${NOT_AROUND_IT}; if it did not take effect, tell the user.`;
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
