import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { serverTrouble, type DispatchError } from '../errors';
import type { PostHookInput } from './guards';
import type { PipelineDeps } from './pipeline-deps';

// The last steps of an attempt that ran (see run-attempt): its post hooks' notes, its breaker record.

/** The post hooks' notes; a hook that throws or rejects adds none. Awaits only a promise. */
export function postHookNotes(deps: PipelineDeps, input: PostHookInput): readonly string[] | Promise<readonly string[]> {
  try {
    const notes = deps.guards.postHook(input);
    return notes instanceof Promise ? notes.catch(() => NO_NOTES) : notes;
  } catch {
    return NO_NOTES;
  }
}

const NO_NOTES: readonly string[] = [];

/** Failures that count against a breaker: timeouts, transport errors, crashes, 5xx and 408. */
export function countsForBreaker(error: DispatchError): boolean {
  if (error.kind === ErrorKind.TIMEOUT || error.kind === ErrorKind.UNAVAILABLE || error.kind === ErrorKind.UNEXPECTED) return true;
  return error.kind === ErrorKind.TOOL_ERROR && (error.httpStatus === undefined || serverTrouble(error.httpStatus));
}
