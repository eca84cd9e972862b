import { randomUUID } from 'node:crypto';
import { throttledWarn, type Logger } from '../log';
import { answerWithin } from '../pipeline';
import { closeWithin, createOrderedPublisher, createWatchedSubscriber, defineApprovalScripts, type RedisConnector, type SubscriberWatchOptions } from '../store/redis';
import { approvalMatches, type ApprovalFilter, type Approvals, type PendingApproval } from './approvals';
import { indexApproval, indexedApprovals, LIST_PAGE_APPROVALS, renewApprovalsLease, unindexApproval, type ApprovalsPage } from './approvals-index';

/** The channel every replica listens on for decisions on approvals it may hold. */
export const APPROVALS_CHANNEL = 'dispatch:approvals';

/** Options of {@link createApprovalsRelay}. */
export interface ApprovalsRelayOptions extends SubscriberWatchOptions {
  readonly approvals: Approvals;
  /** Opens a Redis connection: one publishes, the others subscribe (a new one each time the subscription is deemed deaf, see createWatchedSubscriber). */
  readonly connect: RedisConnector;
  readonly logger: Logger;
  /** How long a forwarded decision waits for the holding replica to confirm, in ms. @default 2000 */
  readonly replyTimeoutMs?: number;
  /**
   * This replica's lease in the index of each tenant it holds waits of, renewed every third of it:
   * once it lapses (the replica died, or lost Redis), ListApprovals elsewhere no longer lists
   * them, as nobody can decide them. In ms. @default 15000 (a worker's silence before it is gone)
   */
  readonly leaseMs?: number;
}

/** Decides approvals wherever they wait: on this replica, or on another one through Redis. */
export interface ApprovalsRelay {
  /** True when the approval was waiting (here or on another replica) and is now decided. */
  resolve(approvalId: string, approve: boolean, tenant: string, reason?: string): Promise<boolean>;
  /**
   * A page of the approvals of `tenant` waiting on any replica that `filter` passes, the first to
   * end first (LIST_PAGE_APPROVALS at most; `truncated` when more pass): those indexed in Redis and
   * this replica's own. Rejects with an ApprovalsUnlistedError when Redis does not answer within
   * `replyTimeoutMs`.
   */
  list(tenant: string, filter?: ApprovalFilter): Promise<ApprovalsPage>;
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
  /** The asker settles the outcome through the request's key (claim, then applied/failed, or void); absent from older replicas. */
  readonly claim?: boolean;
  /** The approver's reason: a denial's for the denied call's result, either's for APPROVAL_RESOLVED (absent from older replicas, and when none was given). */
  readonly reason?: string;
}

/** The default of ApprovalsRelayOptions.leaseMs. */
const LEASE_MS = 15_000;

/** How long the key that settles a forwarded decision lives, in ms (well past both sides' waits). */
const DECISION_KEY_TTL_MS = 60_000;
/** How often an asker reads a key its holder has claimed but not yet settled, in ms. */
const CLAIMED_POLL_MS = 25;

/** The key on which a forwarded decision is settled once: claimed by its holder, or voided by its asker. */
const decisionKey = (request: string) => `${APPROVALS_CHANNEL}:request:{${request}}`;

/** The key that says an approval waits on some replica, holding its tenant; it lives as long as the wait may. */
const pendingKey = (approvalId: string) => `${APPROVALS_CHANNEL}:pending:{${approvalId}}`;

/** The tenant recorded for an approval any tenant may decide (a wait that named none). */
const ANY_TENANT = '';

/** The approvals waiting on other replicas could not be read (Redis did not answer in time). */
export class ApprovalsUnlistedError extends Error {
  override readonly name = 'ApprovalsUnlistedError';
}

/** The outcome of a forwarded decision could not be learnt (Redis did not answer in time). */
export class DecisionUnknownError extends Error {
  override readonly name = 'DecisionUnknownError';
}

/**
 * An Ask waits on the replica that runs the call, while ResolveApproval may reach any replica
 * behind the Service: a decision this replica does not hold is published to every replica, and
 * the one holding the approval confirms on the asker's reply channel. The outcome is settled once,
 * on a key of the request: the holder claims it (SET NX) before it applies the decision and then
 * records whether it did; an asker that has no confirmation after `replyTimeoutMs` voids the key
 * (SET NX) or, when the holder claimed it first, reads what it recorded. So the answer matches
 * what happened even when the confirmation is lost (the asker's subscription deaf or not yet
 * subscribed) or late, and a decision that arrives after its asker gave up is not applied. When
 * Redis does not answer the asker in time either, the outcome cannot be known and `resolve`
 * rejects with a DecisionUnknownError (the RPC answers UNAVAILABLE). A subscription that stops
 * hearing (its Cluster node stalled, a half-open connection) moves within a few probes.
 * Replicas of the previous version neither claim nor void: between them and this one, a decision
 * can still be applied after its asker answered "not resolved" (as before).
 *
 * Every wait on this replica is recorded on a key of its id holding its tenant (see PendingRecord),
 * written before the id is announced, deleted when the wait ends, and living no longer than the
 * wait may: a decision this replica does not hold is published only when that key says the
 * approval waits for the caller's tenant. An unknown, stale, decided or other tenant's id is so
 * answered "not resolved" after one GET, instead of holding the RPC `replyTimeoutMs` and leaving a
 * request key behind. When the GET fails or takes `replyTimeoutMs`, the decision is published as
 * before. A wait whose key could not be written (Redis away) is still announced and can be decided
 * on its own replica; elsewhere it answers "not resolved". Replicas of the previous version write
 * no such key: their approvals can be decided on them only.
 *
 * For ListApprovals, each wait is also indexed under its tenant (approvals-index.ts: a sorted set
 * by expiry, a hash of what is shown and one of each id's tool and session, in the tenant's cluster
 * slot, each step one Lua script; a listing filters on the latter and reads one page of the first),
 * beside its pending key (whose value stays the tenant alone, as replicas of the previous version
 * read it), and taken out when it ends; members whose wait ended without that (their replica died)
 * are pruned when the index is read or written. Each is indexed with this replica's id, whose
 * lease in the tenant's index it renews (`leaseMs`) while it holds waits of the tenant: a wait
 * whose replica's lease lapsed is not listed (before, one whose replica died was listed until its
 * wait would have ended, up to approval_timeout_ms, and deciding it did nothing). A replica whose
 * event loop stalls past its lease has its waits unlisted meanwhile. Replicas of the previous
 * version index nothing, or no replica: their waits are listed by none, or whatever their replica.
 */
export function createApprovalsRelay(options: ApprovalsRelayOptions): ApprovalsRelay {
  const replyTimeoutMs = options.replyTimeoutMs ?? 2000;
  const leaseMs = options.leaseMs ?? LEASE_MS;
  const replica = randomUUID();
  const replyChannel = `${APPROVALS_CHANNEL}:reply:${replica}`;
  const publisher = options.connect();
  const { connect, logger, probeIntervalMs, maxMissedProbes, deafNodeAvoidMs } = options;
  // Probes through an ordered publisher: on a Cluster, one a stalled master holds fails after its
  // stallMs and the next go through another master, so the probes keep telling.
  const subscriber = createWatchedSubscriber({ name: 'approvals relay', connect, publisher: createOrderedPublisher(publisher), logger, probeIntervalMs, maxMissedProbes, deafNodeAvoidMs });
  const waiting = new Map<string, (resolved: boolean | undefined) => void>();
  const warn = throttledWarn(logger);
  defineApprovalScripts(publisher);
  // The tenant of each wait indexed here, whose lease is renewed while it waits.
  const held = new Map<string, string>();
  const renew = setInterval(() => {
    for (const tenant of new Set(held.values())) void renewApprovalsLease(publisher, tenant, replica, leaseMs).catch(() => undefined);
  }, Math.max(1, Math.floor(leaseMs / 3)));
  renew.unref();
  options.approvals.recordWith({
    async record(approvalId, tenant, ttlMs, shown) {
      if (shown) held.set(approvalId, tenant ?? ANY_TENANT);
      const indexed = shown ? answerWithin(indexApproval(publisher, tenant ?? ANY_TENANT, shown, ttlMs, replica, leaseMs).catch(() => undefined), replyTimeoutMs) : undefined;
      const written = await answerWithin(publisher.set(pendingKey(approvalId), tenant ?? ANY_TENANT, 'PX', ttlMs).catch(() => undefined), replyTimeoutMs);
      if (written !== 'OK') warn('approvals relay: a waiting approval could not be recorded in Redis; a ResolveApproval reaching another replica answers resolved=false for it', { approvalId });
      if (indexed && (await indexed) !== true) warn('approvals relay: a waiting approval could not be indexed in Redis (unreachable, or 1,000 of its tenant indexed); ListApprovals on another replica does not show it', { approvalId });
    },
    forget(approvalId, tenant) {
      held.delete(approvalId);
      const of = tenant ?? ANY_TENANT;
      // Its last wait of the tenant: its lease goes too (sent after any later wait's record, which writes it again).
      const last = ![...held.values()].includes(of);
      void publisher.del(pendingKey(approvalId)).catch(() => undefined);
      void unindexApproval(publisher, of, approvalId, last ? replica : '').catch(() => undefined);
    },
  });
  void subscriber.subscribe(APPROVALS_CHANNEL, replyChannel).catch((error: Error) => logger.warn('approvals relay: subscribe failed', { error: error.message }));
  subscriber.onMessage((channel, text) => {
    let message: Partial<Decision> & { resolved?: boolean };
    try {
      message = JSON.parse(text) as typeof message;
    } catch {
      return;
    }
    if (channel === replyChannel) {
      if (typeof message.request === 'string') waiting.get(message.request)?.(message.resolved === true);
      return;
    }
    const { id, approve, tenant, request, replyTo, expires, claim } = message;
    const reason = typeof message.reason === 'string' ? message.reason : undefined;
    if (typeof id !== 'string' || typeof tenant !== 'string' || typeof request !== 'string' || typeof replyTo !== 'string') return;
    // Held up on its way (Redis stalled, or it queued while Redis was away) past the time its asker waited.
    if (typeof expires === 'number' && expires <= Date.now()) return;
    if (!options.approvals.holds(id, tenant)) return;
    const confirm = (resolved: boolean) => void publisher.publish(replyTo, JSON.stringify({ request, resolved })).catch(() => undefined);
    if (claim !== true) {
      // An asker of the previous version: applied as it says.
      if (options.approvals.resolve(id, approve === true, tenant, reason)) confirm(true);
      return;
    }
    void settleAsHolder(id, approve === true, tenant, request, reason).then((resolved) => resolved !== undefined && confirm(resolved));
  });

  /** Claims the request's key, applies the decision, records whether it did; undefined when the asker voided it first (or Redis did not answer). */
  async function settleAsHolder(id: string, approve: boolean, tenant: string, request: string, reason: string | undefined): Promise<boolean | undefined> {
    const key = decisionKey(request);
    const claimed = await answerWithin(publisher.set(key, 'claimed', 'PX', DECISION_KEY_TTL_MS, 'NX').catch(() => null), replyTimeoutMs);
    if (claimed !== 'OK') return undefined;
    const resolved = options.approvals.resolve(id, approve, tenant, reason);
    await answerWithin(publisher.set(key, resolved ? 'applied' : 'failed', 'PX', DECISION_KEY_TTL_MS, 'XX').catch(() => null), replyTimeoutMs);
    return resolved;
  }

  /** After no confirmation came: voids the request's key, or reads what its holder recorded. */
  async function settleAsAsker(request: string): Promise<boolean> {
    const key = decisionKey(request);
    const unknown = () => new DecisionUnknownError('the replica holding the approval did not confirm and Redis did not answer in time: whether the decision was applied is not known');
    const voided = await answerWithin(publisher.set(key, 'void', 'PX', DECISION_KEY_TTL_MS, 'NX').catch(() => undefined), replyTimeoutMs);
    if (voided === undefined) throw unknown();
    if (voided === 'OK') return false;
    // Claimed first: the holder records the outcome right after applying it.
    const until = Date.now() + replyTimeoutMs;
    for (;;) {
      const state = await answerWithin(publisher.get(key).catch(() => undefined), Math.max(1, until - Date.now()));
      if (state === 'applied') return true;
      if (state === 'failed' || state === null) return false;
      if (state === undefined || Date.now() >= until) throw unknown();
      await new Promise((r) => setTimeout(r, CLAIMED_POLL_MS));
    }
  }
  return {
    async resolve(approvalId, approve, tenant, reason) {
      if (options.approvals.resolve(approvalId, approve, tenant, reason)) return true;
      // Waits nowhere, or for another tenant: not resolved at once. Unknown (Redis failed): published as before.
      const pendingFor = await answerWithin(publisher.get(pendingKey(approvalId)).catch(() => undefined), replyTimeoutMs);
      if (pendingFor === null || (pendingFor !== undefined && pendingFor !== ANY_TENANT && pendingFor !== tenant)) return false;
      const request = randomUUID();
      // A confirmation (true or false), or undefined after replyTimeoutMs without one.
      const confirmed = new Promise<boolean | undefined>((resolve) => {
        const timer = setTimeout(() => settle(undefined), replyTimeoutMs);
        const settle = (resolved: boolean | undefined) => {
          clearTimeout(timer);
          waiting.delete(request);
          resolve(resolved);
        };
        waiting.set(request, settle);
      });
      const decision: Decision = { id: approvalId, approve, tenant, request, replyTo: replyChannel, expires: Date.now() + replyTimeoutMs, claim: true, ...(reason ? { reason } : {}) };
      // Not awaited: a publish that Redis holds (stalled, or queued while it is away) must not hold
      // the RPC; the key settles what happened to it.
      publisher.publish(APPROVALS_CHANNEL, JSON.stringify(decision)).catch((error: Error) => {
        options.logger.warn('approvals relay: publish failed', { error: error.message });
        waiting.get(request)?.(undefined);
      });
      const resolved = await confirmed;
      return resolved ?? settleAsAsker(request);
    },
    async list(tenant, filter = {}) {
      const indexed = await answerWithin(indexedApprovals(publisher, tenant, filter).catch(() => undefined), replyTimeoutMs);
      if (indexed === undefined) throw new ApprovalsUnlistedError('Redis did not answer in time: the approvals waiting on other replicas cannot be listed');
      // This replica's own first: one whose index write failed is still shown. When more pass
      // than the page holds, none past its last (so that the answer is the first ones only).
      const last = indexed.truncated ? indexed.approvals.at(-1)?.expiresAt : undefined;
      const own = options.approvals.list(tenant, filter).filter((approval) => last === undefined || approval.expiresAt <= last);
      const seen = new Set(own.map((approval) => approval.approvalId));
      const others = indexed.approvals.filter((approval) => !seen.has(approval.approvalId) && approvalMatches(approval, filter));
      const all = [...own, ...others].sort((a, b) => a.expiresAt - b.expiresAt);
      return { approvals: all.slice(0, LIST_PAGE_APPROVALS), truncated: indexed.truncated || all.length > LIST_PAGE_APPROVALS };
    },
    async close() {
      clearInterval(renew);
      for (const settle of [...waiting.values()]) settle(false);
      // The publisher queues while Redis is away, without a command timeout: QUIT is bounded.
      await Promise.all([subscriber.close(), closeWithin(publisher, replyTimeoutMs)]);
    },
  };
}
