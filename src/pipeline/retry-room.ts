import type { ResolvedTool } from '../registry';
import { deadlineSlack } from './turn-error';

/**
 * The least a read-only retry needs left for its tool to run, however fast its failed attempt
 * was (a 503 in 2 ms): small and absolute. A share of the tool's timeout refused every cheap
 * retry under an ordinary client deadline (a tenth of the default 30 s is 3 s).
 */
export const RETRY_MIN_RUN_MS = 100;

/**
 * Why a retry of `tool` after a backoff of `delayMs` is not begun (the warning its result carries),
 * or undefined when it may be. A retry cut by the request's deadline ends the whole turn
 * DEADLINE_EXCEEDED, the results of its other calls lost, and a side-effecting one that reached its
 * tool leaves its key OUTCOME_UNKNOWN for the record's TTL: giving the client more time gave a worse
 * answer than giving it less (when the backoff alone passed the deadline, the call ended soft).
 * So once the backoff is over, what is left before the deadline must hold the deadline's slack (the
 * time kept to answer, see deadlineSlack) and, for a read-only tool, as long as its tool ran in the
 * failed attempt (`ranMs`: the executor's own time, not the waits for hooks, a slot or a rate turn
 * before it; undefined when the tool never ran) and at least {@link RETRY_MIN_RUN_MS} (its timeout
 * at most). For a side-effecting tool, its whole timeout, so that a retry begun can finish: even
 * when that timeout is longer than the whole request's (its attempts are then given only the time
 * left, and such a call is never retried under that deadline). A read-only retry cut short costs
 * the turn; a side-effecting one also locks its key OUTCOME_UNKNOWN, so it stays conservative.
 * No deadline: always.
 */
export function retryRefusal(tool: ResolvedTool, turn: { readonly deadline: number; readonly received?: number }, delayMs: number, ranMs: number | undefined, now = Date.now()): string | undefined {
  if (!Number.isFinite(turn.deadline)) return undefined;
  const left = Math.floor(turn.deadline - (now + delayMs));
  if (left <= 0) return `not retried: waiting ${delayMs} ms to retry would pass the request's deadline`;
  const slack = deadlineSlack(turn.deadline, turn.received);
  const run = tool.readOnly ? Math.min(tool.timeoutMs, Math.max(ranMs ?? 0, RETRY_MIN_RUN_MS)) : tool.timeoutMs;
  const needs = Math.ceil(run + slack);
  if (left >= needs) return undefined;
  return `not retried: after waiting ${delayMs} ms to retry, ${left} ms would be left before the request's deadline; a retry needs ${needs} ms (${why(tool, turn)}, and time to answer)`;
}

/** What a refused retry needed, in its warning's words. */
function why(tool: ResolvedTool, turn: { readonly deadline: number; readonly received?: number }): string {
  if (tool.readOnly) return `as long as the tool ran in the failed attempt, at least ${RETRY_MIN_RUN_MS} ms`;
  const whole = "the tool's whole timeout: a side-effecting retry cut short could not say whether it took effect";
  const longer = turn.received !== undefined && tool.timeoutMs >= turn.deadline - turn.received;
  return longer ? `${whole}; its timeout_ms (${tool.timeoutMs}) is longer than the request's, so it is never retried under it` : whole;
}
