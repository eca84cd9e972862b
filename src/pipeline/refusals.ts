import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../errors';
import type { ResolvedTool } from '../registry';
import type { ClaimOutcome, SessionBudget } from '../store';
import { unknownOutcomeSuggestion } from './side-effect-failure';

// The refusals of an attempt by the store step's answers: nothing was executed.

export const refused = (kind: ErrorKind, message: string, recoverable = false) => new DispatchError(kind, message, { phase: 'before', recoverable });

/** A session budget as a model reads it: "its budget of 3 calls of tools matching send_*". */
const budgetText = (tool: ResolvedTool, budget: SessionBudget) => `budget of ${budget.max} call${budget.max === 1 ? '' : 's'} of ${budget.id === tool.name ? `"${tool.name}"` : `tools matching ${budget.id}`}`;

/**
 * Adds to `warnings` the warning on a call that leaves its session's budget nearly spent (a fifth
 * of it or less, at least the last call), so that the model can plan what is left; none before.
 */
export function budgetWarning(tool: ResolvedTool, budget: SessionBudget, left: number, warnings: string[]): void {
  if (left > Math.max(1, Math.floor(budget.max / 5))) return;
  warnings.push(left === 0 ? `this was the last call of this session's ${budgetText(tool, budget)} ${BUDGET_TAG}` : `this session has ${left} call${left === 1 ? '' : 's'} left of its ${budgetText(tool, budget)} ${BUDGET_TAG}`);
}

/** How a budget's warnings and refusals end: they name the config that set it. */
const BUDGET_TAG = '(policies budget:)';

/** Whether `warning` tells a session budget's count (see {@link budgetWarning}). */
export const isBudgetWarning = (warning: string): boolean => warning.endsWith(BUDGET_TAG);

/** The refusal of a call past its session's budget. */
export function overBudget(tool: ResolvedTool, budget: SessionBudget): DispatchError {
  return new DispatchError(ErrorKind.BLOCKED, `this session has used its ${budgetText(tool, budget)} ${BUDGET_TAG}; this call was not executed`, {
    phase: 'before',
    recoverable: false,
    suggestion: 'Do without this tool for the rest of this session.',
  });
}

/**
 * How long IN_PROGRESS asks to wait: a tenth of the tool's timeout (at least 1 s, at most the
 * timeout), so the same call made again finds the first one's result soon after it ends. Before,
 * the whole timeout: an agent probe's loop slept 10 s for a call that ended 1.5 s later.
 */
const inProgressWaitMs = (tool: ResolvedTool) => Math.min(tool.timeoutMs, Math.max(1_000, Math.ceil(tool.timeoutMs / 10)));

/**
 * The refusal an idempotency claim answered: IN_PROGRESS is recoverable (the same call made again
 * once the first has ended is answered by its record, replayed, never run twice; made again before
 * that, IN_PROGRESS again), and told to wait a share of the tool's timeout, within which the first
 * call's attempt ends; OUTCOME_UNKNOWN is not.
 */
export function claimRefusal(claim: ClaimOutcome | undefined, tool: ResolvedTool): DispatchError | undefined {
  if (claim?.state === 'in_progress') {
    return new DispatchError(ErrorKind.IN_PROGRESS, 'an identical call is still running (or its claim of the idempotency key is not released yet); this one was not executed', {
      phase: 'before',
      recoverable: true,
      retryAfterMs: inProgressWaitMs(tool),
      suggestion: `An identical call (from another turn) is still running; this one did nothing. Call it again after retry_after_ms: once that call has ended (within the tool's timeout, ${tool.timeoutMs / 1000} s), the same call returns its result, replayed, and until then gets IN_PROGRESS again. It runs the tool only if that call ran nothing, or if the replica running it was lost before it ended (its claim lapses after the tool's timeout).`,
    });
  }
  if (claim?.state === 'unknown') {
    return new DispatchError(ErrorKind.OUTCOME_UNKNOWN, 'an identical earlier call was cut off while the tool ran (a timeout, a lost connection or a lost worker), so its effect is unknown; this one was not executed', { phase: 'before', recoverable: false, suggestion: unknownOutcomeSuggestion(tool) });
  }
  return undefined;
}
