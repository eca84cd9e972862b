import type { ResolvedTool } from '../registry';
import { deadlineSlack } from './turn-error';

/** The least share of a tool's timeout a read-only retry needs left, whatever its failed attempt took. */
export const RETRY_TIMEOUT_SHARE = 0.1;

/**
 * Why a retry of `tool` after a backoff of `delayMs` is not begun (the warning its result carries),
 * or undefined when it may be. A retry cut by the request's deadline ends the whole turn
 * DEADLINE_EXCEEDED, the results of its other calls lost, and a side-effecting one that reached its
 * tool leaves its key OUTCOME_UNKNOWN for the record's TTL: giving the client more time gave a worse
 * answer than giving it less (when the backoff alone passed the deadline, the call ended soft).
 * So once the backoff is over, what is left before the deadline must hold the deadline's slack (the
 * time kept to answer, see deadlineSlack) and, for a read-only tool, as long as the failed attempt
 * took (`failedMs`) and at least {@link RETRY_TIMEOUT_SHARE} of its timeout (its timeout at most);
 * for a side-effecting tool, its whole timeout: it runs only if it can finish. No deadline: always.
 */
export function retryRefusal(tool: ResolvedTool, turn: { readonly deadline: number; readonly received?: number }, delayMs: number, failedMs: number, now = Date.now()): string | undefined {
  if (!Number.isFinite(turn.deadline)) return undefined;
  const left = Math.floor(turn.deadline - (now + delayMs));
  if (left <= 0) return `not retried: waiting ${delayMs} ms to retry would pass the request's deadline`;
  const slack = deadlineSlack(turn.deadline, turn.received);
  const run = tool.readOnly ? Math.min(tool.timeoutMs, Math.max(failedMs, tool.timeoutMs * RETRY_TIMEOUT_SHARE)) : tool.timeoutMs;
  const needs = Math.ceil(run + slack);
  if (left >= needs) return undefined;
  const why = tool.readOnly ? "as long as the failed attempt took, at least a tenth of the tool's timeout" : "the tool's whole timeout: a side-effecting retry cut short could not say whether it took effect";
  return `not retried: after waiting ${delayMs} ms to retry, ${left} ms would be left before the request's deadline; a retry needs ${needs} ms (${why}, and time to answer)`;
}
