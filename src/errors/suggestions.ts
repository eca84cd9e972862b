import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import type { FailurePhase } from './dispatch-error';

/** The default next step a model is told for each kind of failure. */
const SUGGESTIONS: Readonly<Record<ErrorKind, string>> = {
  [ErrorKind.UNSPECIFIED]: 'Report this failure to the user; do not call the tool again unchanged.',
  [ErrorKind.UNKNOWN_TOOL]: 'Call one of the available tools instead, using its exact name.',
  [ErrorKind.INVALID_ARGUMENTS]:
    'Fix the arguments to match the tool\'s input schema and call the tool again.',
  [ErrorKind.BLOCKED]:
    'Do not retry this call; choose a different action or ask the user for permission.',
  [ErrorKind.BREAKER_OPEN]:
    'The tool is temporarily unavailable after repeated failures; use another tool, or try again later.',
  [ErrorKind.TIMEOUT]:
    'Try again with a smaller request (narrower query, fewer items), or use another tool.',
  [ErrorKind.UNAVAILABLE]:
    'The tool could not be reached; it is safe to call again later, or use another tool meanwhile.',
  [ErrorKind.TOOL_ERROR]:
    'Read the tool\'s error message. If it is about the request, correct the request and call again only if the change addresses it; if the tool itself failed (a server error), call again later or use another tool.',
  [ErrorKind.UNEXPECTED]:
    'The tool failed in an unexpected way; do not repeat the same call, tell the user or try a different approach.',
  [ErrorKind.IN_PROGRESS]:
    'An identical call (from another turn) is still running; this one did nothing. The same call made again after retry_after_ms returns that call\'s result, replayed; it runs the tool only if that call ran nothing, or if the replica running it was lost before it ended (its claim lapses after the tool\'s timeout).',
  [ErrorKind.OUTCOME_UNKNOWN]:
    'An identical earlier call may or may not have taken effect; verify its effect (for example by reading the current state) before calling again.',
  [ErrorKind.STORE_UNAVAILABLE]:
    'The call was not executed because its at-most-once guarantee could not be checked; try again shortly.',
  [ErrorKind.LOOP_BLOCKED]:
    'This exact call has failed the same way several times; change the arguments or take a different approach.',
  [ErrorKind.CANCELLED]: 'The call was cancelled; call it again only if it is still needed.',
};

/**
 * The next step after a side-effecting call that ran to its end but whose answer could not be
 * used (UNEXPECTED after it ran): its action took effect, so calling again would do it twice.
 */
export const RAN_UNREAD = 'The call ran and its action took effect, but its answer could not be read; do not call it again: tell the user it was done and that its result is not available.';

/**
 * The next step after a refusal of a tool whose circuit breaker is open, when the breaker knows
 * when it may let a call through again (`retryAfterMs`, rounded up to whole seconds).
 */
export function breakerOpenSuggestion(retryAfterMs: number): string {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return `The tool is temporarily unavailable after repeated failures; use another tool, or try again in about ${seconds} second${seconds === 1 ? '' : 's'}.`;
}

/** What a failure's suggestion depends on besides its kind, when the caller knows it. */
export interface FailureFacts {
  readonly phase: FailurePhase;
  /** The tool's effect is read_only. */
  readonly readOnly: boolean;
}

/** The suggestion for a kind of failure, and for its phase and the tool's effect when given. */
export function suggestionFor(kind: ErrorKind, facts?: FailureFacts): string {
  if (kind === ErrorKind.UNEXPECTED && facts?.phase === 'after' && !facts.readOnly) return RAN_UNREAD;
  return SUGGESTIONS[kind];
}
