import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../errors';
import type { ResolvedTool } from '../registry';
import type { ClaimOutcome, SessionBudget } from '../store';

// The refusals of an attempt by the store step's answers: nothing was executed.

export const refused = (kind: ErrorKind, message: string, recoverable = false) => new DispatchError(kind, message, { phase: 'before', recoverable });

/** The refusal of a call past its session's budget. */
export function overBudget(tool: ResolvedTool, budget: SessionBudget): DispatchError {
  return new DispatchError(ErrorKind.BLOCKED, `this session has used its budget of ${budget.max} call${budget.max === 1 ? '' : 's'} of ${budget.id === tool.name ? `"${tool.name}"` : `tools matching ${budget.id}`} (policies budget:); this call was not executed`, {
    phase: 'before',
    recoverable: false,
    suggestion: 'Do without this tool for the rest of this session.',
  });
}

export function claimRefusal(claim: ClaimOutcome | undefined): DispatchError | undefined {
  if (claim?.state === 'in_progress') return refused(ErrorKind.IN_PROGRESS, 'an identical call is still running; this one was not executed');
  if (claim?.state === 'unknown') return refused(ErrorKind.OUTCOME_UNKNOWN, 'an identical earlier call timed out mid-flight, so its effect is unknown; this one was not executed');
  return undefined;
}
