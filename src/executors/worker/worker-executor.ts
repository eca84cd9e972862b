import { ErrorKind } from '../../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../../errors';
import type { Delivery, Executor, ExecutorContext } from '../executor';
import { createReachedCalls } from './reached-calls';
import { afterEarlierAttempt, isRelayDown, noWorkerError, relayDown, tooLargeWhileRelayDown } from './worker-errors';
import type { AssignmentRequest, TooLargeAssignment, WorkerPool } from './worker-pool';

/** Carries an assignment to a worker connected to another replica. */
export interface WorkerRelay {
  /**
   * Rejects UNAVAILABLE (before) when no replica hosts the tool. Tells `delivery` 'pending' as it
   * starts and 'sent' just before the assignment is published (see ExecutorContext.delivery): a
   * call that ends before (a route lookup held by a stalled Redis) was sent to no one.
   */
  forward(request: AssignmentRequest, signal: AbortSignal, delivery?: (state: Delivery) => void): Promise<string>;
  /**
   * False while other replicas surely cannot be reached (Redis away, or not subscribed yet), when
   * forward() would wait for them until the call's deadline or fail. @default always true
   */
  reachable?(): boolean;
  close(): Promise<void>;
}

/**
 * A call no worker connected here can receive (its assignment is past their receive limits) goes
 * through the relay to another replica's worker, which may: a replica's own refusal (its workers'
 * bound) comes back as it is, and when no other replica hosts the tool the local refusal stands.
 * Before, the local refusal was final, though another replica could run it. With the relay down
 * (Redis away), whether one could is not known: the call is refused for now (UNAVAILABLE before,
 * recoverable, not retried within the turn), not for good, and at once rather than at its deadline.
 * So goes a read-only call no worker here may run (`tooLarge` absent, see noRunnableWorker); with
 * the relay down, its local refusal (UNAVAILABLE before) stands.
 */
function elsewhere(remote: WorkerRelay, request: AssignmentRequest, ctx: ExecutorContext, refusal: DispatchError, tooLarge: TooLargeAssignment | undefined, delivery?: (state: Delivery) => void): Promise<string> {
  const down = (cause?: unknown) => (tooLarge ? tooLargeWhileRelayDown(request.tool, tooLarge, cause) : refusal);
  if (remote.reachable?.() === false) return Promise.reject(down());
  return remote.forward(request, ctx.signal, delivery).catch((error: unknown) => {
    if (isRelayDown(error)) throw down(error);
    throw error instanceof DispatchError && error.kind === ErrorKind.UNAVAILABLE && error.phase === 'before' ? refusal : error;
  });
}

/**
 * Runs worker-hosted tools: on a worker connected here when there is one that can receive the
 * call, else through the relay to another replica's worker; with neither, the call fails BEFORE
 * execution (UNAVAILABLE, safe to retry; INVALID_ARGUMENTS when only too small workers host it),
 * and at once when the relay is down (UNAVAILABLE, to call again in a few seconds). A retry of a
 * read-only call whose earlier attempt was sent to a worker, refused before running (no worker,
 * the relay down, ...), says the call may have run (afterEarlierAttempt), not that it was not executed.
 */
export function createWorkerExecutor(pool: WorkerPool, relay: () => WorkerRelay | undefined): Executor {
  const reached = createReachedCalls();
  return {
    // Not async: the assignment's promise is returned as it is (an async wrapper measured as a
    // promise, a generator resumption and microtasks more per worker call); whatever throws rejects.
    execute(tool, args, ctx) {
      try {
        const request: AssignmentRequest = {
          tenant: tool.tenant,
          tool: tool.name,
          toolCallId: ctx.toolCallId,
          argumentsJson: JSON.stringify(args ?? {}),
          sessionId: ctx.sessionId,
          attempt: ctx.attempt,
          idempotencyKey: ctx.idempotencyKey,
          deadline: ctx.deadline,
          traceparent: ctx.traceparent,
          readOnly: tool.readOnly,
        };
        // What the relay told of its delivery: 'pending' when a forward ended before sending anything.
        let delivered: Delivery | undefined;
        const remote = relay();
        const delivery =
          remote &&
          ((state: Delivery) => {
            delivered = state;
            ctx.delivery?.(state);
          });
        const run = assign(pool, remote, request, ctx, delivery);
        // Only a read-only call is tried again after a failure while it ran (a side-effecting one
        // is not): its failures alone are looked at, one handler more per call.
        if (!tool.readOnly || tool.retry.maxAttempts <= 1) return run;
        const earlier = ctx.attempt > 1 && reached.take(tool.tenant, ctx);
        return run.then(undefined, (error: unknown) => {
          const before = error instanceof DispatchError && error.phase === 'before';
          // Sent (an abort may come after), or following an attempt that was: the next attempt is told.
          if (earlier || (!before && delivered !== 'pending')) reached.remember(tool.tenant, ctx);
          throw earlier ? afterEarlierAttempt(tool.name, error) : error;
        });
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };
}

/** One attempt: on a worker here, else through the relay, else refused (see createWorkerExecutor). */
function assign(pool: WorkerPool, remote: WorkerRelay | undefined, request: AssignmentRequest, ctx: ExecutorContext, delivery: ((state: Delivery) => void) | undefined): Promise<string> {
  if (pool.hosts(request.tenant, request.tool)) return pool.assign(request, ctx, remote && ((refusal, tooLarge) => elsewhere(remote, request, ctx, refusal, tooLarge, delivery)));
  // Redis away: refused at once (the forward would wait for it until the call's deadline).
  if (remote?.reachable?.() === false) return Promise.reject(relayDown(new Error('the relay is not reachable')));
  if (remote) return remote.forward(request, ctx.signal, delivery);
  return Promise.reject(noWorkerError(request.tool));
}
