import type { CallSummary } from '../../src/events';
import type { Logger } from '../../src/log';
import { connectRedis } from '../../src/store/redis';
import { createToolStats } from '../../src/telemetry';
import { createPendingDeltas } from '../../src/telemetry/pending-deltas';
import { resolveSharedStatsLimits, sharedStatsLimitsFromEnv } from '../../src/telemetry/shared-stats-options';
import { createSharedToolStats } from '../../src/telemetry/shared-tool-stats';
import { closedPort } from '../helpers/servers';
import { addTools, countFields, parseCounts, statsKeys } from '../../src/telemetry/stats-hash';

const call = (over: Partial<CallSummary>): CallSummary => ({ tenant: 't', tool: 'x', known: true, outcome: 'ok', attempts: 1, durationMs: 1, validationFailed: false, timedOut: false, retried: false, idempotentHit: false, bounded: false, unexpected: false, ...over });

test('pending deltas: sealed per tenant, resent unchanged until settled, later calls wait in a new batch', () => {
  const deltas = createPendingDeltas(10);
  deltas.add(call({ validationFailed: true }));
  deltas.add(call({ tenant: 'u', tool: 'y', attempts: 2, retried: true }));
  expect(deltas.add(call({ tool: 'ghost', known: false }))).toBe(true);
  const first = deltas.seal();
  expect(first.map((b) => [b.tenant, b.seq, [...b.tools.keys()]])).toEqual([
    ['t', 1, ['x']],
    ['u', 2, ['y']],
  ]);
  deltas.add(call({}));
  // t's batch failed: it is sent again as it was, with its number; the later call waits.
  deltas.settle(first[1]!);
  const again = deltas.seal();
  expect(again).toEqual([first[0]]);
  expect(again[0]!.tools.get('x')).toMatchObject({ calls: 1, validationFailures: 1 });
  expect(deltas.held('t').pending.get('x')).toMatchObject({ calls: 1, validationFailures: 0 });
  expect(deltas.held('t').sealed).toBe(first[0]);
  deltas.settle(first[0]!);
  const next = deltas.seal();
  expect(next.map((b) => [b.tenant, b.seq, b.tools.get('x')?.calls])).toEqual([['t', 3, 1]]);
  deltas.settle(next[0]!);
  expect(deltas.pairs).toBe(0);
  expect(deltas.seal()).toEqual([]);
});

test('pending deltas hold at most maxPairs (tenant, tool) entries, sealed ones included; a read gets a copy', () => {
  const deltas = createPendingDeltas(2);
  expect(deltas.add(call({ tool: 'a' }))).toBe(true);
  expect(deltas.add(call({ tool: 'b' }))).toBe(true);
  expect(deltas.add(call({ tool: 'c' }))).toBe(false);
  expect(deltas.add(call({ tool: 'a' }))).toBe(true);
  const [batch] = deltas.seal();
  expect(deltas.add(call({ tool: 'a' }))).toBe(false);
  deltas.settle(batch!);
  expect(deltas.add(call({ tool: 'c' }))).toBe(true);
  const held = deltas.held('t').pending;
  deltas.add(call({ tool: 'c' }));
  expect(held.get('c')!.calls).toBe(1);
  expect(deltas.held('t').pending.get('c')!.calls).toBe(2);
});

test('pending deltas: one tenant holds at most its own share, so another tenant\'s counts are still kept (while Redis is away)', () => {
  const deltas = createPendingDeltas(10, 2);
  expect(deltas.add(call({ tenant: 'greedy', tool: 'a' }))).toBe(true);
  expect(deltas.add(call({ tenant: 'greedy', tool: 'b' }))).toBe(true);
  expect(deltas.add(call({ tenant: 'greedy', tool: 'c' }))).toBe(false);
  expect(deltas.add(call({ tenant: 'greedy', tool: 'a' }))).toBe(true);
  expect(deltas.add(call({ tenant: 'modest', tool: 'send' }))).toBe(true);
  const batches = deltas.seal();
  for (const batch of batches) deltas.settle(batch);
  expect(deltas.add(call({ tenant: 'greedy', tool: 'c' }))).toBe(true);
});

test('stats hash: hash-tagged key per tenant, tool\\0counter fields of non-zero counts, parsed back', () => {
  expect(statsKeys('acme', 'r1')).toEqual({ counts: 'dispatch:stats:{tYWNtZQ}', flushed: 'dispatch:stats:{tYWNtZQ}:flushed:r1' });
  expect(statsKeys('', 'r1').counts).toBe('dispatch:stats:{t}');
  expect(statsKeys('a}b', 'r1', 'x').counts).toBe('x:stats:{tYX1i}');
  const deltas = createPendingDeltas(10);
  deltas.add(call({ validationFailed: true }));
  deltas.add(call({ tool: 'y', timedOut: true, retried: true, attempts: 2 }));
  const [batch] = deltas.seal();
  const fields = countFields(batch!.tools);
  expect(fields).toEqual(['x\u0000calls', '1', 'x\u0000attempts', '1', 'x\u0000validation_failures', '1', 'y\u0000calls', '1', 'y\u0000attempts', '2', 'y\u0000timeouts', '1', 'y\u0000retries', '1']);
  const hash = Object.fromEntries(Array.from({ length: fields.length / 2 }, (_, i) => [fields[2 * i]!, fields[2 * i + 1]!]));
  const parsed = parseCounts({ ...hash, 'x\u0000calls': '5', 'x\u0000other': '1', 'noseparator': '1', '\u0000calls': '1', 'y\u0000retries': 'many' });
  expect(parsed.get('x')).toEqual({ calls: 5, attempts: 1, validationFailures: 1, timeouts: 0, retries: 0, idempotentHits: 0, bounded: 0, unexpected: 0, errors: 0 });
  expect(parsed.get('y')).toMatchObject({ calls: 1, attempts: 2, timeouts: 1, retries: 0 });
  expect([...parsed.keys()]).toEqual(['x', 'y']);
  addTools(parsed, batch!.tools);
  expect(parsed.get('x')).toMatchObject({ calls: 6, validationFailures: 2 });
});

test('shared stats limits: defaults, and exact messages for values out of range', () => {
  expect(resolveSharedStatsLimits()).toEqual({ flushIntervalMs: 1000, ttlSeconds: 604800, flushedTtlSeconds: 3600, maxPendingPairs: 10000, maxToolsPerTenant: 2000, keyPrefix: 'dispatch' });
  expect(resolveSharedStatsLimits({ flushIntervalMs: 50, keyPrefix: 'p' })).toMatchObject({ flushIntervalMs: 50, keyPrefix: 'p' });
  expect(() => resolveSharedStatsLimits({ flushIntervalMs: 5 })).toThrow('flushIntervalMs must be an integer from 10 to 3600000, got 5');
  expect(() => resolveSharedStatsLimits({ maxPendingPairs: 0 })).toThrow('maxPendingPairs must be an integer from 1 to 1000000, got 0');
  expect(() => resolveSharedStatsLimits({ ttlSeconds: 1.5 })).toThrow('ttlSeconds must be an integer from 1 to 31536000, got 1.5');
  expect(sharedStatsLimitsFromEnv({})).toEqual({});
  expect(sharedStatsLimitsFromEnv({ DISPATCH_STATS_FLUSH_MS: '250' })).toEqual({ flushIntervalMs: 250 });
  expect(() => sharedStatsLimitsFromEnv({ DISPATCH_STATS_FLUSH_MS: '1s' })).toThrow('DISPATCH_STATS_FLUSH_MS must be an integer from 10 to 3600000, got "1s"');
  expect(() => sharedStatsLimitsFromEnv({ DISPATCH_STATS_FLUSH_MS: '0' })).toThrow('DISPATCH_STATS_FLUSH_MS must be an integer from 10 to 3600000, got 0');
});

test('without Redis: reads answer from the local counts with a warning, a full pending set and a close that loses counts are logged once each', async () => {
  const lines: string[] = [];
  const log = (level: string) => (message: string) => void lines.push(`${level}: ${message}`);
  const logger: Logger = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
  const local = createToolStats();
  const port = await closedPort();
  const shared = createSharedToolStats({ local, logger, maxPendingPairs: 1, flushIntervalMs: 10, connect: () => connectRedis(`redis://127.0.0.1:${port}`, { commandTimeoutMs: 200 }) });
  for (const tool of ['x', 'y', 'z']) {
    local.record(call({ tool }));
    shared.record(call({ tool }));
  }
  await shared.flush();
  const answer = await shared.read('t');
  expect(answer).toMatchObject({ scope: 'replica', warning: 'redis is unreachable: the counts cover only the calls of the replica that answered' });
  expect([...answer.tools.keys()]).toEqual(['x', 'y', 'z']);
  await shared.close();
  expect(lines).toEqual([
    'warn: shared tool stats: too many counts wait for redis; calls of further (tenant, tool) pairs are left out',
    'warn: shared tool stats: redis unreachable; GetToolStats answers from this replica’s counts and counts wait to be flushed',
    'error: shared tool stats: closed with counts redis never received',
  ]);
});

test("pending deltas forget a removed tool's counts, pending and sealed; the sealed batch keeps its number", () => {
  const deltas = createPendingDeltas(10);
  deltas.add(call({ tool: 'x' }));
  deltas.add(call({ tool: 'y' }));
  const [batch] = deltas.seal();
  deltas.add(call({ tool: 'x' }));
  expect(deltas.pairs).toBe(3);
  expect(deltas.forget('t', 'x')).toBe(true);
  expect(deltas.forget('t', 'x')).toBe(false);
  expect(deltas.pairs).toBe(1);
  const [again] = deltas.seal();
  expect([again!.seq, [...again!.tools.keys()]]).toEqual([batch!.seq, ['y']]);
  deltas.settle(batch!);
  expect(deltas.pairs).toBe(1);
  deltas.settle(again!);
  expect(deltas.pairs).toBe(0);
  expect(deltas.forget('t', 'y')).toBe(false);
});
