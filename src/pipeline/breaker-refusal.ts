import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { breakerOpenSuggestion, DispatchError, suggestionFor } from '../errors';
import type { ResolvedTool } from '../registry';
import { callBreakerKey } from './breaker-key';
import type { PipelineDeps, TurnContext } from './pipeline-deps';

/**
 * The refusal of an attempt its tool's breaker does not let through: recoverable, with when the
 * breaker may let a call through again (retry_after_ms and the suggestion), when it can tell.
 */
export function breakerOpen(deps: PipelineDeps, turn: Pick<TurnContext, 'tenant'>, tool: ResolvedTool): DispatchError {
  const wait = deps.guards.breaker.retryAfterMs?.(callBreakerKey(turn.tenant, tool));
  const retryAfterMs = wait === undefined ? undefined : Math.max(1, Math.ceil(wait));
  return new DispatchError(ErrorKind.BREAKER_OPEN, `tool "${tool.name}" is temporarily unavailable: its circuit breaker is open after repeated failures`, {
    phase: 'before',
    recoverable: true,
    retryAfterMs,
    suggestion: retryAfterMs === undefined ? undefined : breakerOpenSuggestion(retryAfterMs),
  });
}

/**
 * What a call whose retry its breaker refused is told: the error its tool gave (`failure`, the
 * call's last attempt on it that ran), which the refusal would hide, and that the tool is now
 * unavailable (DESIGN section 3, step 12: a call not retried returns its original error). A
 * recoverable one says when to call again, as the refusal does.
 */
export function failedThenRefused(failure: DispatchError, refusal: DispatchError): DispatchError {
  const message = `${failure.message} (not retried: the tool's circuit breaker opened after repeated failures, so it is temporarily unavailable)`;
  const { recoverable } = failure;
  return failure.retold(message, {
    retryAfterMs: recoverable ? refusal.retryAfterMs : failure.retryAfterMs,
    suggestion: recoverable ? (refusal.suggestion ?? suggestionFor(ErrorKind.BREAKER_OPEN)) : failure.suggestion,
    notRetriedWithinTurn: false,
  });
}

/**
 * What the model is told of `refusal`, an attempt of `tool` refused: when its breaker refused it
 * after the call's own last attempt on the tool ran and failed (`ranAndFailed`), that failure
 * (failedThenRefused); otherwise the refusal itself.
 */
export function breakerTold(refusal: DispatchError, tool: ResolvedTool, ranAndFailed: { readonly tool: string; readonly error: DispatchError } | undefined): DispatchError {
  const failure = refusal.kind === ErrorKind.BREAKER_OPEN && ranAndFailed?.tool === tool.name ? ranAndFailed.error : undefined;
  return failure ? failedThenRefused(failure, refusal) : refusal;
}
