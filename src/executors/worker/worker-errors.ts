import { ErrorKind } from '../../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../../errors';
import { MAX_TIMER_MS } from '../../options/limits';
import { shortened } from '../../pipeline/bound-result';
import type { EndReason } from './stream-end';
import type { ReceiveLimit } from './worker-link';

/** Where WorkerPool finds them beside the errors it makes. */
export { unreadReason, type EndReason } from './stream-end';

/** What an attempt following one sent to a worker says of the call (see afterEarlierAttempt). */
const EARLIER = 'an earlier attempt was sent to a worker (the call may or may not have run)';

/**
 * How each refusal made here that says "the call was not executed" is told instead when an
 * earlier attempt of the call was sent to a worker (see afterEarlierAttempt).
 */
const retold = new WeakMap<DispatchError, () => DispatchError>();

/** The errors relayDown made: told apart by identity, not by their text (see isRelayDown). */
const relayDownErrors = new WeakSet<DispatchError>();

/** What a refusal for the relay being down asks the model to wait (ioredis reconnects within seconds of Redis coming back). */
const RELAY_DOWN_RETRY_AFTER_MS = 5_000;
/**
 * A refusal for the relay being down, whether known before the call was forwarded
 * (WorkerRelay.reachable) or met by the forward (not subscribed yet, the connection lost during
 * the route lookup or before the PUBLISH was written, or Redis answered the PUBLISH with an error;
 * lost after it was written, see relayLostAfterSend): a retry within the turn would find it down
 * still (ioredis waits before reconnecting), so the model is told to call again later.
 */
const relayDownLater = (suggestion: string) => ({ retryAfterMs: RELAY_DOWN_RETRY_AFTER_MS, notRetriedWithinTurn: true, suggestion: `Try again in ${RELAY_DOWN_RETRY_AFTER_MS / 1000} seconds or later: ${suggestion}.` });

/**
 * The link to other replicas (Redis) is down: no worker could be reached, nothing ran; dispatch's
 * trouble, not the tool's (notTheTool), to call again later, not within the turn, and at once
 * rather than at the call's deadline (every such refusal, see tooLargeWhileRelayDown).
 */
export function relayDown(cause: unknown): DispatchError {
  const why = redisReplyCode(cause);
  const what = why === undefined ? 'the link to other dispatch replicas (Redis) is down' : `Redis refused to pass the call on to the other dispatch replicas (its error reply ${why})`;
  const error = relayDownError(cause, what, 'the call was not executed');
  retold.set(error, () => relayDownError(cause, what, `this attempt was not executed; ${EARLIER}`));
  return error;
}

/**
 * The code of an error reply of Redis's (ioredis's ReplyError: NOPERM, BUSY, OOM, its first word,
 * capitals only), or undefined for any other failure (the connection lost, a timeout): Redis
 * refused the command, so it ran nothing. Only the code is told: the rest of a reply names
 * Redis's users and commands, which are no business of the model's (the cause keeps it for the logs).
 */
export function redisReplyCode(cause: unknown): string | undefined {
  if (!(cause instanceof Error) || cause.name !== 'ReplyError') return undefined;
  return /^[A-Z]{2,32}(?= |$)/.exec(cause.message)?.[0] ?? 'ERR';
}

function relayDownError(cause: unknown, what: string, outcome: string): DispatchError {
  const error = new DispatchError(ErrorKind.UNAVAILABLE, `${what}, so no worker could be reached; ${outcome}`, {
    phase: 'before',
    recoverable: true,
    cause,
    notTheTool: true,
    ...relayDownLater('the tool is temporarily unreachable'),
  });
  relayDownErrors.add(error);
  return error;
}

/**
 * The link to other replicas (Redis) was lost after a relayed call's assignment was written to it
 * (its PUBLISH on the socket): Redis may have taken it, or ioredis send it again once it reconnects
 * (a connection killed, Redis back at once), and the worker run it. Not "not executed" (as before,
 * for a read-only call): UNAVAILABLE during, recoverable, dispatch's trouble (notTheTool). A
 * read-only call is tried again (a retry finding the link still down is refused, saying this; see
 * afterEarlierAttempt), and the attempt is cancelled on the hosting replica (the worker may have
 * started it); a side-effecting one is never refused so (its reply is awaited instead), nor is a
 * PUBLISH Redis answered with an error (ReplyError: nothing ran, relayDown).
 */
export function relayLostAfterSend(tool: string, cause: unknown): DispatchError {
  return new DispatchError(ErrorKind.UNAVAILABLE, `the link to other dispatch replicas (Redis) was lost after the call's assignment was sent to the replica hosting "${tool}"; the call may or may not have run`, {
    phase: 'during',
    recoverable: true,
    cause,
    notTheTool: true,
  });
}

/** Whether `error` is this replica's relayDown (a reply from another replica never is). */
export const isRelayDown = (error: unknown): boolean => error instanceof DispatchError && relayDownErrors.has(error);

/**
 * No worker connected here can receive the call (`tooLarge`), and the link to other replicas is
 * down: one of theirs may, once it is back. UNAVAILABLE before, recoverable: not the permanent
 * "too large" refusal (assignmentTooLargeError), which would tell the model never to send it.
 * Not retried within the turn, nor counted by the breaker (as relayDown).
 */
export function tooLargeWhileRelayDown(tool: string, tooLarge: { readonly workerId: string; readonly bytes: number; readonly limit: ReceiveLimit }, cause?: unknown): DispatchError {
  const told = (outcome: string) =>
    new DispatchError(
      ErrorKind.UNAVAILABLE,
      `no worker connected here can receive the call's assignment (${tooLarge.bytes} bytes; worker "${tooLarge.workerId}" hosting "${tool}" receives ${tooLarge.limit.bytes}), and the link to other dispatch replicas (Redis) is down, so a worker there that may receive it could not be reached; ${outcome}. Try again once the link is back`,
      { phase: 'before', recoverable: true, cause, notTheTool: true, ...relayDownLater('the tool is temporarily unreachable with arguments this large') },
    );
  const error = told('the call was not executed');
  retold.set(error, () => told(`this attempt was not executed; ${EARLIER}`));
  return error;
}

/** The errors noWorkerError made: told apart by identity (see isNoWorker). */
const noWorkerErrors = new WeakSet<DispatchError>();
const NO_WORKER_SUGGESTION = 'The tool is temporarily unavailable; try again later or use another tool.';

/** No worker hosts the tool: nothing ran, so a retry (later, or by a model) is safe. */
export function noWorkerError(tool: string): DispatchError {
  const error = new DispatchError(ErrorKind.UNAVAILABLE, `no worker is connected for tool "${tool}"; the call was not executed`, {
    phase: 'before',
    recoverable: true,
    suggestion: NO_WORKER_SUGGESTION,
    noHost: true,
  });
  noWorkerErrors.add(error);
  return error;
}

/** Whether `error` is this replica's noWorkerError (one from another replica never is). */
export const isNoWorker = (error: unknown): boolean => error instanceof DispatchError && noWorkerErrors.has(error);

/**
 * No worker hosts the tool any longer, and an earlier attempt of this (read-only) call was sent
 * to one (which went away while it ran, or the relay's link was lost after sending it, see
 * relayLostAfterSend): this attempt was not executed (phase before, recoverable, as
 * noWorkerError), but the call as a whole may have been. Before, it said "the call was not
 * executed", untrue of the attempt that reached the worker, and then that the worker "went away",
 * untrue when the link was lost instead.
 */
export function noWorkerAnyLongerError(tool: string, cause: unknown): DispatchError {
  return new DispatchError(ErrorKind.UNAVAILABLE, `no worker is connected any longer for tool "${tool}" to try the call again; ${EARLIER}`, {
    phase: 'before',
    recoverable: true,
    cause,
    suggestion: NO_WORKER_SUGGESTION,
    noHost: true,
  });
}

/**
 * `error` as this attempt of a (read-only) call tells it when an earlier attempt was sent to a
 * worker: a refusal before execution ("the call was not executed": the relay down, too large while
 * it is, no worker, or any other replica's refusal) says that this attempt alone was not, and that
 * the call may have run, as noWorkerAnyLongerError does; its kind, phase and options are kept.
 * Before, only "no worker" was retold. Anything else is returned as it is.
 */
export function afterEarlierAttempt(tool: string, error: unknown): unknown {
  if (!(error instanceof DispatchError) || error.phase !== 'before') return error;
  if (isNoWorker(error)) return noWorkerAnyLongerError(tool, error);
  const own = retold.get(error);
  if (own) return own();
  // Another replica's refusal, or one whose text is not its own here: its words kept, then the correction.
  return error.retold(`${error.message} (so said of this attempt only: ${EARLIER})`);
}

/**
 * The worker holding an assignment disconnected or went silent: the outcome is unknown. A
 * side-effecting call's result then says it may have taken effect, and is not recoverable (the
 * pipeline decides both, sideEffectFailure); a read-only one may simply be called again, unless
 * `recoverable` is false (calling again would meet the same end, see streamEndReason).
 */
export function workerGoneError(tool: string, workerId: string, reason: EndReason): DispatchError {
  const note = reason.note ? `; ${reason.note}` : '';
  return new DispatchError(ErrorKind.UNAVAILABLE, `worker "${workerId}" hosting "${tool}" ${reason.why} while running the call${note}`, { phase: 'during', recoverable: reason.recoverable ?? true, suggestion: reason.suggestion });
}

const LIMIT_SOURCES: Record<Exclude<ReceiveLimit['from'], 'dropped'>, { readonly receives: string; readonly remedy: string }> = {
  hello: {
    receives: "can receive (its hello's max_receive_message_bytes)",
    remedy: "raise the worker's receive limit (grpc.max_receive_message_length) and say so in its hello's max_receive_message_bytes",
  },
  assumed: {
    receives: 'is ASSUMED to receive (limits.worker_receive_bytes, as its hello does not say max_receive_message_bytes)',
    remedy:
      "have the worker say its receive limit (grpc.max_receive_message_length, raised) in its hello's max_receive_message_bytes, or, for workers that do not send it, raise limits.worker_receive_bytes to what their channels receive",
  },
  max_message_bytes: { receives: 'can be sent (limits.max_message_bytes)', remedy: 'raise limits.max_message_bytes' },
};

/** What a refusal says of where a worker's receive limit comes from, and what raises it. */
const limitSource = (limit: ReceiveLimit): { readonly receives: string; readonly remedy: string } =>
  limit.from === 'dropped'
    ? {
        receives: `is kept to until ${new Date(limit.until!).toISOString()} (workers of its id twice dropped their streams just after large assignments, the last of ${limit.dropped} bytes, though its hello says max_receive_message_bytes ${limit.said})`,
        remedy: `have the worker state a true max_receive_message_bytes in its hello (what its channel's grpc.max_receive_message_length allows, raised; a hello stating more than ${limit.said} is believed), or call again after that time`,
      }
    : LIMIT_SOURCES[limit.from];

/**
 * The call's assignment (`bytes`, its arguments `argumentBytes` of them) is larger than any worker
 * hosting the tool receives (`limit`, the largest of theirs): it was sent to none (a gRPC channel
 * refuses a message past its receive limit and ends the stream, and the call was then told "no
 * worker is connected"). INVALID_ARGUMENTS, before, never retried: the same arguments meet the
 * same limit. The message says whether the limit was assumed and what an operator changes.
 */
export function assignmentTooLargeError(tool: string, workerId: string, bytes: number, argumentBytes: number, limit: ReceiveLimit): DispatchError {
  const source = limitSource(limit);
  return new DispatchError(
    ErrorKind.INVALID_ARGUMENTS,
    `arguments are ${argumentBytes} bytes: the assignment carrying them would be ${bytes} bytes, over the ${limit.bytes} bytes${limit.bytes % 1_048_576 === 0 ? ` (${limit.bytes / 1_048_576} MiB)` : ''} that worker "${workerId}" hosting "${tool}" ${source.receives}; it was not sent and the tool was not executed. ` +
      `To allow it, ${source.remedy}, or keep limits.max_argument_bytes below it`,
    { phase: 'before', recoverable: false, suggestion: 'Send smaller arguments, for example by splitting the work into several calls.' },
  );
}

/** The worker answered the assignment with an error: the tool ran and said no. */
export function workerToolError(tool: string, message: string, retryAfterMs = 0): DispatchError {
  // Never through a surrogate pair (see fromHttpStatus).
  const text = message === '' ? 'no message' : shortened(message, 2_000);
  if (retryAfterMs > 0) {
    // The worker says its tool did not run the call, for now (Completion.retry_after_ms): as an HTTP 429's Retry-After.
    const wait = Math.min(retryAfterMs, MAX_TIMER_MS);
    return new DispatchError(ErrorKind.UNAVAILABLE, `tool "${tool}" did not run the call, for now: ${text}`, { phase: 'before', recoverable: true, retryAfterMs: wait, notTheTool: true });
  }
  return new DispatchError(ErrorKind.TOOL_ERROR, `tool "${tool}" reported an error: ${text}`, { phase: 'after', recoverable: false });
}

/**
 * A replica's failure of a relayed call that the next replica hosting the tool is tried after:
 * none of its workers hosts it (UNAVAILABLE before), or none can receive it (INVALID_ARGUMENTS
 * before: nothing was sent, so even a side-effecting call may go elsewhere). Returns the refusal
 * to give when no replica takes it (the first), and throws any other failure.
 */
export function triedElsewhere(error: unknown, refused: DispatchError | undefined): DispatchError | undefined {
  if (!(error instanceof DispatchError) || error.phase !== 'before') throw error;
  if (error.kind === ErrorKind.UNAVAILABLE) return refused;
  if (error.kind === ErrorKind.INVALID_ARGUMENTS) return refused ?? error;
  throw error;
}
