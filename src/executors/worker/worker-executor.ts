import type { Delivery, Executor } from '../executor';
import { noWorkerError } from './worker-errors';
import type { AssignmentRequest, WorkerPool } from './worker-pool';

/** Carries an assignment to a worker connected to another replica. */
export interface WorkerRelay {
  /**
   * Rejects UNAVAILABLE (before) when no replica hosts the tool. Tells `delivery` 'pending' as it
   * starts and 'sent' just before the assignment is published (see ExecutorContext.delivery): a
   * call that ends before (a route lookup held by a stalled Redis) was sent to no one.
   */
  forward(request: AssignmentRequest, signal: AbortSignal, delivery?: (state: Delivery) => void): Promise<string>;
  close(): Promise<void>;
}

/**
 * Runs worker-hosted tools: on a worker connected here when there is one, else through the relay
 * to another replica's worker; with neither, the call fails BEFORE execution (safe to retry).
 */
export function createWorkerExecutor(pool: WorkerPool, relay: () => WorkerRelay | undefined): Executor {
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
        if (pool.hosts(tool.tenant, tool.name)) return pool.assign(request, ctx);
        const remote = relay();
        if (remote) return remote.forward(request, ctx.signal, (state) => ctx.delivery?.(state));
        return Promise.reject(noWorkerError(tool.name));
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };
}
