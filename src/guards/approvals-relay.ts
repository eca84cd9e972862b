import { randomUUID } from 'node:crypto';
import type { Logger } from '../log';
import { createOrderedPublisher, createWatchedSubscriber, type RedisClient, type SubscriberWatchOptions } from '../store/redis';
import type { Approvals } from './approvals';

/** The channel every replica listens on for decisions on approvals it may hold. */
export const APPROVALS_CHANNEL = 'dispatch:approvals';

/** Options of {@link createApprovalsRelay}. */
export interface ApprovalsRelayOptions extends SubscriberWatchOptions {
  readonly approvals: Approvals;
  /** Opens a Redis connection: one publishes, the others subscribe (a new one each time the subscription is deemed deaf, see createWatchedSubscriber). */
  readonly connect: () => RedisClient;
  readonly logger: Logger;
  /** How long a forwarded decision waits for the holding replica to confirm, in ms. @default 2000 */
  readonly replyTimeoutMs?: number;
}

/** Decides approvals wherever they wait: on this replica, or on another one through Redis. */
export interface ApprovalsRelay {
  /** True when the approval was waiting (here or on another replica) and is now decided. */
  resolve(approvalId: string, approve: boolean, tenant: string): Promise<boolean>;
  close(): Promise<void>;
}

interface Decision {
  readonly id: string;
  readonly approve: boolean;
  readonly tenant: string;
  readonly request: string;
  readonly replyTo: string;
  /** Epoch ms after which the decision is void: its asker has answered "not resolved" by then (absent from older replicas). */
  readonly expires?: number;
}

/**
 * An Ask waits on the replica that runs the call, while ResolveApproval may reach any replica
 * behind the Service: a decision this replica does not hold is published to every replica, and
 * the one holding the approval confirms on the asker's reply channel. The asker waits at most
 * `replyTimeoutMs` (a Redis that holds the publish does not hold the RPC), and a decision that
 * arrives after that is void: a caller told "not resolved" never sees it applied later. A
 * subscription that stops hearing (its Cluster node stalled, a half-open connection) moves within a
 * few probes; decisions published meanwhile are lost, and their askers answer "not resolved".
 */
export function createApprovalsRelay(options: ApprovalsRelayOptions): ApprovalsRelay {
  const replyTimeoutMs = options.replyTimeoutMs ?? 2000;
  const replyChannel = `${APPROVALS_CHANNEL}:reply:${randomUUID()}`;
  const publisher = options.connect();
  const { connect, logger, probeIntervalMs, maxMissedProbes, deafNodeAvoidMs } = options;
  // Probes through an ordered publisher: on a Cluster, one a stalled master holds fails after its
  // stallMs and the next go through another master, so the probes keep telling.
  const subscriber = createWatchedSubscriber({ name: 'approvals relay', connect, publisher: createOrderedPublisher(publisher), logger, probeIntervalMs, maxMissedProbes, deafNodeAvoidMs });
  const waiting = new Map<string, (resolved: boolean) => void>();
  void subscriber.subscribe(APPROVALS_CHANNEL, replyChannel).catch((error: Error) => logger.warn('approvals relay: subscribe failed', { error: error.message }));
  subscriber.onMessage((channel, text) => {
    let message: Partial<Decision> & { resolved?: boolean };
    try {
      message = JSON.parse(text) as typeof message;
    } catch {
      return;
    }
    if (channel === replyChannel) {
      if (message.resolved && message.request) waiting.get(message.request)?.(true);
      return;
    }
    const { id, approve, tenant, request, replyTo, expires } = message;
    if (typeof id !== 'string' || typeof tenant !== 'string' || typeof request !== 'string' || typeof replyTo !== 'string') return;
    // Held up on its way (Redis stalled, or it queued while Redis was away) past the time its asker waited.
    if (typeof expires === 'number' && expires <= Date.now()) return;
    if (options.approvals.resolve(id, approve === true, tenant)) {
      void publisher.publish(replyTo, JSON.stringify({ request, resolved: true })).catch(() => undefined);
    }
  });
  return {
    async resolve(approvalId, approve, tenant) {
      if (options.approvals.resolve(approvalId, approve, tenant)) return true;
      const request = randomUUID();
      const answer = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => settle(false), replyTimeoutMs);
        const settle = (resolved: boolean) => {
          clearTimeout(timer);
          waiting.delete(request);
          resolve(resolved);
        };
        waiting.set(request, settle);
      });
      const decision: Decision = { id: approvalId, approve, tenant, request, replyTo: replyChannel, expires: Date.now() + replyTimeoutMs };
      // Not awaited: a publish that Redis holds (stalled, or queued while it is away) must not hold
      // the RPC past replyTimeoutMs; the decision is void once that has passed.
      publisher.publish(APPROVALS_CHANNEL, JSON.stringify(decision)).catch((error: Error) => {
        options.logger.warn('approvals relay: publish failed', { error: error.message });
        waiting.get(request)?.(false);
      });
      return answer;
    },
    async close() {
      for (const settle of [...waiting.values()]) settle(false);
      await Promise.all([subscriber.close(), publisher.quit().catch(() => publisher.disconnect())]);
    },
  };
}
