import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Result } from 'ioredis';
import { projectRoot } from '../../server/project-root';
import type { RedisClient } from './connect';
import { storeScript, type StoreScript } from './script-command';

type Arg = string | number;

/** What read-result.lua answers for a spill: in chunks ('h', then its length, chunk size, first chunk index and chunks), or whole ('s'). */
export type ReadResultReply = ['h', number, number, number, ...string[]] | ['s', string];

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** give-back-budget.lua: gives back the count of the call marked `budgetMark` against `budget` while the mark holds the counts' epoch, and deletes the mark; 1 when given back. */
    dispatchGiveBackBudget(budgets: string, budgetMark: string, budget: string): Result<number, Context>;
    /** read-result.lua: a page of a spilled result (limit -1: the whole text); see the script for its reply. */
    dispatchReadResult(result: string, offset: number, limit: number): Result<ReadResultReply | null, Context>;
    /** keep-claim.lua: holds `owner`'s claim on `record` at least `ms` from now; 1 when it is still that claim, 0 when not. */
    dispatchKeepClaim(record: string, owner: string, ms: Arg): Result<number, Context>;
    /** read-memory.lua: the live memory entries, oldest first. */
    dispatchReadMemory(memory: string): Result<string[], Context>;
    /** end-session.lua: deletes every key of the session, leaves its end mark (`markMs` at least) and announces its end on `channel`. */
    dispatchEndSession(window: string, memory: string, recordIndex: string, resultIndex: string, budgets: string, ended: string, channel: string, announcement: string, markMs: number): Result<number, Context>;
    /**
     * take-slot.lua: takes a shared concurrency slot, first come first served; 1 when taken, 0 when
     * not, 2 when not because the lease id's tenant holds its `share` (max_in_flight_per_tenant; 0
     * or none: no share); in line when `waits` is 1.
     */
    dispatchTakeSlot(slots: string, line: string, alive: string, tickets: string, max: number, leaseMs: number, leaseId: string, waits: 0 | 1, keepMs: number, share?: number): Result<0 | 1 | 2, Context>;
    /** release-slot.lua: gives a shared concurrency slot, or a place in line, back and tells the waiters on `channel`; 1 when it was held. */
    dispatchReleaseSlot(slots: string, line: string, alive: string, leaseId: string, channel: string): Result<number, Context>;
    /**
     * take-turn.lua: the wait (ms) before a turn under a shared rate limit, taken, and the limit's
     * time it set; when the wait needed is longer than `maxWaitMs`, -1 - the wait to tell the call
     * refused (after the calls refused before it, kept at `told`), '' and the wait needed.
     */
    dispatchTakeTurn(limit: string, told: string, intervalMs: number, toleranceMs: number, maxWaitMs: number): Result<[number, string, number?], Context>;
    /** give-turn.lua: gives back a turn of a shared rate limit whose call gave up waiting, if the limit's time is still `setAt`, the one it set (the last turn queued); 1 when given back. */
    dispatchGiveTurn(limit: string, intervalMs: number, setAt: string): Result<number, Context>;
    /** forget-worker-spec.lua: deletes a worker tool's shared spec and announces it; 1 when it was there. */
    dispatchForgetWorkerSpec(specs: string, field: string, announcement: string): Result<number, Context>;
    /** record-approval.lua: indexes a waiting approval under its tenant for `ttlMs`, held by `replica` (its lease `leaseMs`); 1 when indexed, 0 when the tenant's index holds `max`. `who`: its tool, NUL, its session. */
    dispatchRecordApproval(index: string, shown: string, whoKey: string, owners: string, leases: string, approvalId: string, ttlMs: number, json: string, max: number, who: string, replica: string, leaseMs: number): Result<number, Context>;
    /** forget-approval.lua: takes an ended approval out of its tenant's index, and `replica`'s lease there unless '' (its last wait of the tenant); 1 when it was there. */
    dispatchForgetApproval(index: string, shown: string, whoKey: string, owners: string, leases: string, approvalId: string, replica: string): Result<number, Context>;
    /** list-approvals.lua: a page of the tenant's approvals still waiting, on a replica whose lease lives, that the filter passes ('' any): more (1 or 0), then id, JSON, id, JSON, ... */
    dispatchListApprovals(index: string, shown: string, whoKey: string, owners: string, leases: string, session: string, tool: string, maxEntries: number, maxBytes: number, maxIds: number): Result<[number, ...string[]], Context>;
    /** renew-approvals-lease.lua: renews `replica`'s lease in a tenant's approvals index for `leaseMs`. */
    dispatchRenewApprovalsLease(index: string, shown: string, whoKey: string, owners: string, leases: string, replica: string, leaseMs: number): Result<number, Context>;
  }
}

/** The compiled code lives in dist/, the scripts beside the sources (copied to dist/ by postbuild). */
export function readScript(name: string): string {
  for (const dir of [__dirname, join(projectRoot(__dirname), 'src', 'store', 'redis')]) {
    const file = join(dir, name);
    if (existsSync(file)) return readFileSync(file, 'utf8');
  }
  throw new Error(`the Redis script ${name} is missing beside ${__dirname}`);
}

const SCRIPTS = [
  ['dispatchKeepClaim', 'keep-claim.lua', 1],
  ['dispatchReadMemory', 'read-memory.lua', 1],
  ['dispatchReadResult', 'read-result.lua', 1],
  ['dispatchEndSession', 'end-session.lua', 6],
  ['dispatchGiveBackBudget', 'give-back-budget.lua', 2],
] as const;

/** Defines take-slot.lua and release-slot.lua (the shared concurrency caps), take-turn.lua and give-turn.lua (the shared rate limits) on a client. */
export function defineSlotScript(client: RedisClient): void {
  client.defineCommand('dispatchTakeSlot', { lua: readScript('take-slot.lua'), numberOfKeys: 4 });
  client.defineCommand('dispatchReleaseSlot', { lua: readScript('release-slot.lua'), numberOfKeys: 3 });
  client.defineCommand('dispatchTakeTurn', { lua: readScript('take-turn.lua'), numberOfKeys: 2 });
  client.defineCommand('dispatchGiveTurn', { lua: readScript('give-turn.lua'), numberOfKeys: 1 });
}

/** Defines forget-worker-spec.lua (RemoveTool of a worker tool) on a client. */
export function defineWorkerSpecScript(client: RedisClient): void {
  client.defineCommand('dispatchForgetWorkerSpec', { lua: readScript('forget-worker-spec.lua'), numberOfKeys: 1 });
}

/**
 * Defines record-approval.lua, forget-approval.lua, list-approvals.lua and renew-approvals-lease.lua
 * (ListApprovals across replicas), each prefixed by session-lib.lua (its clock) and approvals-lib.lua.
 */
export function defineApprovalScripts(client: RedisClient): void {
  const lib = `${readScript('session-lib.lua')}\n${readScript('approvals-lib.lua')}`;
  client.defineCommand('dispatchRecordApproval', { lua: `${lib}\n${readScript('record-approval.lua')}`, numberOfKeys: 5 });
  client.defineCommand('dispatchForgetApproval', { lua: `${lib}\n${readScript('forget-approval.lua')}`, numberOfKeys: 5 });
  client.defineCommand('dispatchListApprovals', { lua: `${lib}\n${readScript('list-approvals.lua')}`, numberOfKeys: 5 });
  client.defineCommand('dispatchRenewApprovalsLease', { lua: `${lib}\n${readScript('renew-approvals-lease.lua')}`, numberOfKeys: 5 });
}

/**
 * The scripts of an attempt's two steps, each prefixed by session-lib.lua, sent by storeScript (a
 * cheaper command than defineCommand's, for the two round trips of every call).
 * begin-attempt.lua answers the loop streak and the claim's outcome (see the script for its keys
 * and arguments); finish-attempt.lua does every write of an attempt and answers the op's streak,
 * why its spill was refused (0: it was not), the streak's age, wait left and toldRun (see streakOf).
 */
export function attemptScripts(): { begin: StoreScript; finish: StoreScript } {
  return { begin: storeScript(withSessionLib('begin-attempt.lua'), 6), finish: storeScript(withSessionLib('finish-attempt.lua'), 8) };
}

/** The store script `file`, prefixed by session-lib.lua (the helpers every session script shares). */
const withSessionLib = (file: string): string => `${readScript('session-lib.lua')}\n${readScript(file)}`;

/**
 * Defines the store's other Lua scripts on a client, each prefixed by session-lib.lua. ioredis then sends
 * EVALSHA (EVAL only the first time on a connection, or after Redis lost its script cache).
 */
export function defineScripts(client: RedisClient): void {
  for (const [command, file, numberOfKeys] of SCRIPTS) client.defineCommand(command, { lua: withSessionLib(file), numberOfKeys });
}
