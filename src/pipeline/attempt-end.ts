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

/**
 * Failures that count against a breaker (DESIGN section 8): timeouts, transport and executor
 * errors (a connection refused or lost, a worker gone), crashes, and answers of 5xx or 408. An
 * answer with any other HTTP status (4xx, 429) is not counted, nor is an error the tool answered
 * itself, which says no more of its health than a 4xx: a worker's `is_error` completion, an MCP
 * tool's `isError` result or its server's JSON-RPC error, a redirect dispatch does not follow.
 * Counted, one tenant's bad calls to a shared tool would open its breaker for every tenant. Nor is
 * a call refused because dispatch's Redis (its link to other replicas) is down: that is not the
 * tool's health, and counted, a large call's refusal would refuse small calls too.
 */
export function countsForBreaker(error: DispatchError): boolean {
  if (error.httpStatus !== undefined) return serverTrouble(error.httpStatus);
  if (error.notTheTool) return false;
  return error.kind === ErrorKind.TIMEOUT || error.kind === ErrorKind.UNAVAILABLE || error.kind === ErrorKind.UNEXPECTED;
}
