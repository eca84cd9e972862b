import { ErrorKind } from '../../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../../errors';

/** The link to other replicas (Redis) is down: no worker could be reached, nothing ran. */
export function relayDown(cause: unknown): DispatchError {
  return new DispatchError(ErrorKind.UNAVAILABLE, 'the link to other dispatch replicas (Redis) is down, so no worker could be reached; the call was not executed', { phase: 'before', recoverable: true, cause });
}

/** No worker hosts the tool: nothing ran, so a retry (later, or by a model) is safe. */
export function noWorkerError(tool: string): DispatchError {
  return new DispatchError(ErrorKind.UNAVAILABLE, `no worker is connected for tool "${tool}"; the call was not executed`, {
    phase: 'before',
    recoverable: true,
    suggestion: 'The tool is temporarily unavailable; try again later or use another tool.',
  });
}

/**
 * The worker holding an assignment disconnected or went silent: the outcome is unknown. A
 * side-effecting call's result then says it may have taken effect, and is not recoverable (the
 * pipeline decides both, sideEffectFailure); a read-only one may simply be called again.
 */
export function workerGoneError(tool: string, workerId: string, why: string): DispatchError {
  return new DispatchError(ErrorKind.UNAVAILABLE, `worker "${workerId}" hosting "${tool}" ${why} while running the call`, { phase: 'during', recoverable: true });
}

/** The worker answered the assignment with an error: the tool ran and said no. */
export function workerToolError(tool: string, message: string): DispatchError {
  const text = message === '' ? 'no message' : message.length > 2_000 ? `${message.slice(0, 2_000)}...` : message;
  return new DispatchError(ErrorKind.TOOL_ERROR, `tool "${tool}" reported an error: ${text}`, { phase: 'after', recoverable: false });
}
