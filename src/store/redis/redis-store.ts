import { hash } from 'node:crypto';
import { shortHash } from '../../json';
import { throttledWarn, type Logger } from '../../log';
import { rememberLastObject, rememberRecentTexts } from '../remember';
import { createSessionEndListeners } from '../session-end-listeners';
import { handleScope } from '../result-handle';
import { DEFAULT_TOKEN_LEASE_MS, type BeginAttempt, type BeginAttemptResult, type FinishAttempt, type FinishAttemptResult, type LoopStreak, type SessionScope, type Store } from '../store';
import type { RedisClient } from './connect';
import { batchWrites } from './batch-writes';
import { createLiveClaims } from './live-claims';
import { createOrphanClaims } from './orphan-claims';
import { createTakenProbes } from './taken-probes';
import { unansweredBegin } from './unanswered-begin';
import { clusterPlaces } from './cluster-place';
import { createPendingWrites, type PendingRecord } from './pending-writes';
import { dropConnections, endUnconnected } from './end-client';
import { attemptScripts, defineScripts } from './scripts';
import { createSessionEnds } from './session-ends';
import { sessionKeys } from './session-keys';
import { scanTenantSessions } from './tenant-sessions';
import { spillPage } from './spill-chunks';
import { finishArguments } from './finish-arguments';
import { fitsBytes, resolveSpillLimits, SPILL_REFUSALS, withoutLostHandle, type SpillLimits } from './spill-limits';
import { answeredWithError, storeCall } from './store-call';
import { claimOutcome, recordState } from './record-state';
import { unpackReply } from './packed-reply';
import { createTurnBegins } from '../turn-begins';

/** Options of the Redis store; the spill limits bound the whole texts kept for ReadResult. */
export interface RedisStoreOptions extends SpillLimits {
  /** Time one store step may take before it counts as failed, in ms. @default 1000 (Limits.storeTimeoutMs) */
  readonly timeoutMs?: number;
  /** How long a session's loop window lives after its last record, in seconds. @default 86400 */
  readonly windowTtlSeconds?: number;
  /** Idempotency records kept per session; beyond it those expiring first go. @default 10000 */
  readonly maxRecordsPerSession?: number;
  /** Spilled results kept per session; beyond it those expiring first go. @default 1000 */
  readonly maxResultsPerSession?: number;
  /** Idempotency records waiting for Redis to return before the oldest is dropped. @default 10000 */
  readonly maxPendingRecords?: number;
  /** Interval between attempts to write waiting records, in ms. @default 1000 */
  readonly pendingRetryMs?: number;
  /**
   * Claims in flight on this replica whose owner is remembered, so that a completion Redis refuses
   * holds its claim while it waits (see PendingWrites); beyond it the oldest is forgotten. @default 100000
   */
  readonly maxLiveClaims?: number;
  /**
   * How long a session's end mark lives after EndSession, in seconds (longer while a record or claim
   * of the session does): a call of a turn begun before the end writes back only its idempotency
   * record meanwhile (end-session.lua). @default 86400
   */
  readonly endMarkSeconds?: number;
  /** Key prefix, before the session's hash tag. @default "dispatch" */
  readonly prefix?: string;
  /**
   * Opens a connection that queues while Redis is away (connectRedis with queueWhileDown), to hear
   * the sessions other replicas end (see Store.onSessionEnd). @default none: only this replica's
   */
  readonly connectSubscriber?: () => RedisClient;
  readonly logger?: Logger;
}

/**
 * Loop-window ops are stored hashed: fixed length (the scripts rely on it) and small. The hash is the one
 * of the ops' first format (the tool, NUL, a short hash of the parameter), so that replicas of different versions share windows.
 */
function opId(op: string): string {
  const cut = op.indexOf('\u0000');
  const first = cut === -1 ? op : `${op.slice(0, cut + 1)}${shortHash(op.slice(cut + 1))}`;
  return hash('sha256', first, 'base64url');
}

/** A streak as the scripts answer it (session-lib.lua, streak_of): an age of -1, a wait or a run of 0 are none; failed 3, refusals' (LoopStreak.refused). */
function streakFrom(count: number, failed: number, since: number, wait: number, run = 0): LoopStreak {
  const streak = Number(failed) === 3 ? { count: Number(count), failed: true, refused: true as const } : { count: Number(count), failed: Number(failed) === 1 };
  if (Number(since) < 0 && Number(wait) <= 0 && !(Number(run) > 0)) return streak;
  return { ...streak, ...(Number(since) >= 0 ? { sinceMs: Number(since) } : {}), ...(Number(wait) > 0 ? { waitMs: Number(wait) } : {}), ...(Number(run) > 0 ? { toldRun: Number(run) } : {}) };
}

/** The warning of a completion finish-attempt.lua kept out, another attempt's claim or record in its place. */
const KEPT_OUT = "an attempt's idempotency record was not written: its claim's lease ended before the record reached Redis, and another attempt claimed the key since, so the call may have run twice; that attempt's claim or record is kept";

/** The Redis store: every step is a round trip, so every step is a promise. */
export interface RedisStore extends Store {
  beginAttempt(step: BeginAttempt): Promise<BeginAttemptResult>;
  finishAttempt(step: FinishAttempt): Promise<FinishAttemptResult>;
}

/**
 * The store on Redis, shared by every replica: one Lua script (one EVALSHA round trip) per step,
 * every key of a session under the hash tag `{tenant:session}`. The store owns `client` and quits
 * it on close. Failures and timeouts reject with StoreUnavailableError.
 */
export function createRedisStore(client: RedisClient, options: RedisStoreOptions = {}): RedisStore {
  const timeoutMs = options.timeoutMs ?? 1000;
  const windowTtl = options.windowTtlSeconds ?? 86_400;
  const maxRecords = options.maxRecordsPerSession ?? 10_000;
  const maxResults = options.maxResultsPerSession ?? 1000;
  const spillLimits = resolveSpillLimits(options);
  const settings = { windowTtl, maxRecords, maxResults, spillLimits };
  const warn = throttledWarn(options.logger);
  const keysOf = rememberLastObject((scope: SessionScope) => sessionKeys(scope, options.prefix));
  const idOf = rememberRecentTexts(opId);
  defineScripts(client);
  const scripts = attemptScripts();
  const batch = batchWrites(client);
  const ends = createSessionEndListeners({ waitMs: timeoutMs, logger: options.logger });
  const writeListeners: Array<(resource: string) => void> = [];
  const endMarkMs = (options.endMarkSeconds ?? 86_400) * 1000;
  // When each turn began, by Redis's clock: a finish of a turn begun before its session's end writes back only its record.
  const turns = createTurnBegins();
  const announced = createSessionEnds(client, { prefix: options.prefix, connectSubscriber: options.connectSubscriber, publishStallMs: timeoutMs, timeoutMs, logger: options.logger });

  /** A spill past maxSpillBytes is refused before it is sent (the script refuses one Redis has no room for). */
  const tooLong = (step: FinishAttempt) => step.spill !== undefined && !fitsBytes(step.spill.text, spillLimits.maxSpillBytes);

  /** The finish step's script; a refused spill's completion is kept without its handle. */
  const finish = (step: FinishAttempt, spillTooLong = false): Promise<number[]> =>
    scripts.finish.run<string>(client, finishArguments(step, keysOf(step.scope), idOf(step.op), settings, spillTooLong, turns.of(step.scope))).then((reply) => unpackReply(reply, 7).numbers);
  /** Whether Redis kept the completion out (see finish-attempt.lua): the operator is told the call may have run twice (a late answer's, no). */
  const keptOut = (kept: number | undefined, step: FinishAttempt): boolean => {
    if (Number(kept) !== 1) return false;
    if (!(step.idempotency?.action === 'complete' && step.idempotency.late)) warn(KEPT_OUT, { key: step.idempotency?.key, tenant: step.scope.tenant, session_id: step.scope.sessionId });
    return true;
  };

  const maxPending = options.maxPendingRecords ?? 10_000;
  const orphans = createOrphanClaims(maxPending);
  const released = (r: PendingRecord) => {
    if (r.idempotency?.action === 'release' && r.idempotency.owner) orphans.forget(keysOf(r.scope).record(r.idempotency.key), r.idempotency.owner);
  };
  const liveClaims = createLiveClaims(options.maxLiveClaims ?? 100_000);
  const probes = createTakenProbes(options.maxLiveClaims ?? 100_000);
  const recordOf = (r: PendingRecord) => keysOf(r.scope).record(r.idempotency!.key);
  const pending = createPendingWrites((r) => storeCall('a waiting idempotency record', timeoutMs, () => finish(r)).then((answer) => (keptOut(answer[6], r), released(r))), {
    max: maxPending,
    intervalMs: options.pendingRetryMs ?? 1000,
    keepAlive: (r, ms) => storeCall('a waiting claim held', timeoutMs, () => client.dispatchKeepClaim(recordOf(r), r.owner!, ms)).then((held) => Number(held) === 1),
    keyOf: recordOf,
    placeOf: clusterPlaces(client, (r: PendingRecord) => keysOf(r.scope).window),
    connected: () => client.status === 'ready',
    logger: options.logger,
  });
  const onReady = () => void pending.flush();
  client.on('ready', onReady);

  return {
    shared: true,
    async beginAttempt({ scope, op, claim, budget, block }) {
      batch();
      const keys = keysOf(scope);
      // A command sent on a ready connection may reach Redis even if no answer comes in time; one
      // issued while the connection is down is refused at once and never sent.
      const sent = client.status === 'ready';
      const record = claim ? keys.record(claim.key) : keys.window;
      const orphan = claim ? orphans.ownerOf(record) : '';
      const waiting = claim ? pending.waiting(record) : undefined;
      const id = idOf(op);
      const sentAt = Date.now();
      const reply = await storeCall('the attempt start', timeoutMs, () =>
        scripts.begin.run<string>(client, [
          keys.window,
          keys.recordIndex,
          record,
          budget ? keys.budgets : keys.window,
          block ? keys.probe(id) : keys.window,
          budget?.token ? keys.budgetMark(budget.id, budget.token) : keys.window,
          id,
          claim ? Math.max(1, Math.ceil(claim.leaseMs)) : '',
          claim?.owner ?? '',
          budget?.id ?? '', budget?.max ?? '',
          windowTtl,
          orphan,
          waiting?.owner ?? '',
          block?.threshold ?? '',
          block ? Math.max(0, Math.ceil(block.cooldownMs)) : '',
          block ? (block.peek ? 0 : Math.max(1, Math.ceil(block.leaseMs))) : '', // 0: peek, take none
          budget?.token ?? '',
          block?.holder ?? '',
          budget?.token ? Math.max(1, Math.ceil(budget.tokenLeaseMs ?? DEFAULT_TOKEN_LEASE_MS)) : '', // the token's mark's life
        ]),
      ).catch((error: unknown) => {
        // A step with no answer may still land and hold its claim and probe for their leases: both are given back (its own
        // only) once Redis answers, the claim also by the key's next claim. An error reply took nothing (the script undoes its writes).
        if (sent && !answeredWithError(error)) {
          const giveBack = unansweredBegin({ scope, op, claim, block }, sentAt);
          if (giveBack) pending.add(giveBack);
          if (claim?.owner) orphans.add(record, claim.owner);
        }
        throw error;
      });
      const {
        numbers: [count, failed, left, since, wait, run, probe, began],
        state,
        text: payload,
      } = unpackReply(reply, 8);
      turns.began(scope, began!);
      // Given up only by the claim that replaced it: refused (over budget, waiting, the probe another
      // call holds), the script left the record as it was, the orphan maybe in it still.
      if (orphan !== '' && state === 'claimed') orphans.forget(record, orphan);
      if (state === 'claimed' && claim?.owner) liveClaims.add(record, claim.owner, claim.leaseMs);
      if (Number(probe) === -1 && block?.holder) probes.add(block.holder, sentAt, block.leaseMs);
      const streak = streakFrom(count, failed, since, wait, run);
      if (Number(probe) > 0) return { streak, probeHeldMs: Number(probe) };
      if (state === 'over_budget') return { streak, overBudget: true };
      const budgetLeft = budget && Number(left) >= 0 ? Number(left) : undefined;
      const probed = Number(probe) === -1 ? { probeClaimed: true as const } : {};
      return claim ? { streak, claim: claimOutcome(state, payload, waiting), budgetLeft, ...probed } : { streak, budgetLeft, ...probed };
    },
    async finishAttempt(step) {
      batch();
      const owner = step.idempotency ? liveClaims.take(keysOf(step.scope).record(step.idempotency.key)) : undefined;
      const probeUntil = step.unusedProbe ? probes.take(step.unusedProbe) : undefined;
      try {
        const spillTooLong = tooLong(step);
        const [count, failed, refused, since, wait, run, kept] = await storeCall('the attempt record', timeoutMs, () => finish(step, spillTooLong));
        const streak = streakFrom(count, failed, since, wait, run);
        const out = keptOut(kept, step) ? ({ keptOut: true } as const) : undefined;
        if (!spillTooLong && Number(refused) === 0) return out ? { streak, ...out } : { streak };
        // The session ended since the turn began: only the record was kept (finish-attempt.lua), no warning.
        if (!spillTooLong && Number(refused) === 3) return { streak, spillRefused: true, ...out };
        warn(SPILL_REFUSALS[spillTooLong ? 'tooLong' : Number(refused) === 1 ? 'noRoom' : 'noInfo'], { ...spillLimits });
        return { streak, spillRefused: true, ...out };
      } catch (error) {
        const idem = withoutLostHandle(step);
        // With the probe a give-back frees (alone: until its lease ends): else it stays held for its lease once Redis is back.
        pending.add({ scope: step.scope, op: step.op, idempotency: idem, owner, unusedProbe: step.unusedProbe, probeUntil });
        // A released claim ran nothing: until its release is written, this replica's next claim of the key gives it up.
        if (idem?.action === 'release' && idem.owner) orphans.add(keysOf(step.scope).record(idem.key), idem.owner);
        throw error;
      }
    },
    async giveBackBudget(scope, budgetId, token) {
      const keys = keysOf(scope);
      return Number(await storeCall('a budget count given back', timeoutMs, () => client.dispatchGiveBackBudget(keys.budgets, keys.budgetMark(budgetId, token), budgetId))) === 1;
    },
    async findRecord(scope, key) {
      const record = keysOf(scope).record(key);
      // As begin-attempt.lua reads it: what waits on this replica answers for the record, and an
      // orphan claim of this replica's (its attempt ran nothing) is as good as gone.
      const waiting = pending.waiting(record);
      if (waiting) return waiting.idempotency?.action === 'complete' ? 'completed' : 'unknown';
      const held = await storeCall('an idempotency record read', timeoutMs, () => client.get(record));
      const orphan = orphans.ownerOf(record);
      return held === null || (orphan !== '' && held === `P${orphan}`) ? undefined : recordState(held);
    },
    async readResult(tenant, handle) {
      const scope = handleScope(tenant, handle);
      if (!scope) return undefined;
      const reply = await storeCall('a result read', timeoutMs, () => client.dispatchReadResult(sessionKeys(scope, options.prefix).result(handle), 0, -1));
      if (!reply) return undefined;
      return reply[0] === 's' ? reply[1] : (reply.slice(4) as string[]).join('');
    },
    async readResultPage(tenant, handle, offset, limit) {
      const scope = handleScope(tenant, handle);
      if (!scope) return undefined;
      const reply = await storeCall('a result read', timeoutMs, () => client.dispatchReadResult(sessionKeys(scope, options.prefix).result(handle), offset, limit));
      return reply ? spillPage(reply, offset, limit) : undefined;
    },
    async memory(scope) {
      return storeCall('a memory read', timeoutMs, () => client.dispatchReadMemory(keysOf(scope).memory));
    },
    async endSession(scope) {
      const keys = keysOf(scope);
      const announcement = announced.announcement(scope);
      try {
        await storeCall('the session end', timeoutMs, () => client.dispatchEndSession(keys.window, keys.memory, keys.recordIndex, keys.resultIndex, keys.budgets, keys.ended, announced.channel, announcement, endMarkMs));
      } finally {
        // Also when the step failed: a script sent before its timeout may still run (and its
        // announcement is skipped here), and dropping what this replica keeps of an ending session
        // early is harmless.
        await ends.notify(scope);
      }
    },
    onSessionEnd(listener) {
      ends.add(listener);
      announced.listen((scope) => void ends.notify(scope));
    },
    tenantSessions: (tenant) => scanTenantSessions(client, tenant, options.prefix ?? 'dispatch', timeoutMs),
    announceWrite: (resource) => announced.announceWrite(resource),
    onWriteAnnounced(listener) {
      writeListeners.push(listener);
      announced.listenWrites((resource) => writeListeners.forEach((heard) => heard(resource)));
    },
    onAnnouncementsMissed: (listener) => announced.onMissed(listener),
    ...announced.erasures,
    async close() {
      await announced.close();
      client.off('ready', onReady);
      if (pending.size > 0) await pending.flush();
      pending.close();
      if (pending.size > 0) options.logger?.error('redis store closed with idempotency records unwritten', { count: pending.size });
      // Not connected (Redis away): ended at once, not left to ioredis's 2 s timer (endUnconnected).
      if (client.status === 'ready') await client.quit().catch(() => dropConnections(client));
      else await endUnconnected(client);
    },
  };
}
