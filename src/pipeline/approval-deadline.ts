/**
 * A wait for approval that the turn's deadline would end before the approval timeout: it ends a
 * margin before the deadline instead, and the call is refused BLOCKED (the turn goes on, its other
 * calls' results kept). Before, the RPC ended DEADLINE_EXCEEDED with no ErrorInfo, every result of
 * the turn lost, whenever the client's deadline was shorter than the approval timeout (the Python
 * example's 60 s against the default 120 s).
 */
export interface DeadlineWait {
  readonly signal: AbortSignal;
  /** The time the wait was given, in ms. */
  readonly givenMs: number;
  stop(): void;
}

/** The least and the most time kept back before the deadline, for the rest of the turn and its answer to travel. */
const MIN_MARGIN_MS = 250;
const MAX_MARGIN_MS = 2_000;

/** The wait's end before `deadline` (epoch ms), or undefined when the approval timeout comes first (or there is no deadline). */
export function deadlineWait(deadline: number, approvalTimeoutMs: number, now = Date.now()): DeadlineWait | undefined {
  if (!Number.isFinite(deadline)) return undefined;
  const left = deadline - now;
  const givenMs = Math.max(0, left - Math.min(MAX_MARGIN_MS, Math.max(MIN_MARGIN_MS, left / 10)));
  if (givenMs >= approvalTimeoutMs) return undefined;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), givenMs);
  return { signal: controller.signal, givenMs, stop: () => clearTimeout(timer) };
}

/** What the model is told of an ask the turn's deadline cut short: nobody refused it, as after the approval timeout. */
export const DEADLINE_UNANSWERED =
  "Nobody approved or denied this call in the time this turn allowed, so it was not refused: tell the user this action needs someone to approve it; calling it again asks for approval again (and waits again, within the turn's time), so call it again once an approver is ready.";
