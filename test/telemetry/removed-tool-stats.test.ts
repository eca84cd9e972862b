import { fromBinary, toBinary, create } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { GetToolStatsRequestSchema, GetToolStatsResponseSchema, type GetToolStatsResponse } from '../../gen/dispatch/v1/registry_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import type { CallSummary } from '../../src/events';
import { SILENT_LOGGER } from '../../src/log';
import { connectRedis, type RedisClient } from '../../src/store/redis';
import { createToolStats } from '../../src/telemetry';
import { createSharedToolStats } from '../../src/telemetry/shared-tool-stats';
import { statsKeys } from '../../src/telemetry/stats-hash';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp } from '../helpers/servers';
import { bearer, tokenEntry } from './metrics-app';

// The shared counts (`dispatch:stats:{tenant}`, flushed with HINCRBY, never deleted, TTL refreshed)
// and GetToolStats' answer (registered tools plus every counted name) grew with every tool name
// ever called: 7,441 fields and 3,518 entries (1 s a GetToolStats) after many tools were removed.
// Two replicas of the full app over real gRPC and a private Redis.

jest.setTimeout(60_000);

const FLUSH_MS = 50;
const CONFIG = `tools: []\nauth:\n  tokens:\n${tokenEntry('acme', 'tok', ['dispatch', 'admin'])}`;
type App = Awaited<ReturnType<typeof startApp>>;
const savedFlush = process.env.DISPATCH_STATS_FLUSH_MS;
let redis: TestRedis;
let a: App;
let b: App;
let probe: RedisClient;

beforeAll(async () => {
  process.env.DISPATCH_STATS_FLUSH_MS = String(FLUSH_MS);
  redis = await startRedis({ own: true });
  probe = connectRedis(redis.url);
  [a, b] = await Promise.all([0, 1].map(() => startApp(CONFIG, { redisUrl: redis.url })));
});
afterAll(async () => {
  if (savedFlush === undefined) delete process.env.DISPATCH_STATS_FLUSH_MS;
  else process.env.DISPATCH_STATS_FLUSH_MS = savedFlush;
  probe?.disconnect();
  await a?.close();
  await b?.close();
  await redis?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const HASH = statsKeys('acme', '').counts;
const toolsInHash = async () => [...new Set((await probe.hkeys(HASH)).map((field) => field.split('\0')[0]!))].sort();
const echo = (name: string) => ({ name, effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', executor: { case: 'builtin' as const, value: { name: 'echo' } } });
const call = async (app: App, name: string) => (await app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name, arguments: '{}' }] }, bearer('tok'))).results[0]!;

function stats(app: App): Promise<Record<string, number>> {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', 'Bearer tok');
  return new Promise((resolve, reject) => {
    (app.registry.raw as grpc.Client).makeUnaryRequest(
      '/dispatch.v1.ToolRegistryService/GetToolStats',
      (m: object) => Buffer.from(toBinary(GetToolStatsRequestSchema, create(GetToolStatsRequestSchema, m))),
      (bytes: Buffer) => fromBinary(GetToolStatsResponseSchema, bytes),
      {},
      metadata,
      { deadline: Date.now() + 10_000 },
      (error: grpc.ServiceError | null, response?: GetToolStatsResponse) => (error ? reject(error) : resolve(Object.fromEntries(response!.stats.map((s) => [s.tool, Number(s.calls)])))),
    );
  });
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not in time: ${what}`);
    await sleep(FLUSH_MS);
  }
}

const NAMES = ['gone_0', 'gone_1', 'gone_2', 'gone_3', 'kept'];

test("RemoveTool deletes the tool's fields from the shared hash, on the replica that removed it and the one that counted it", async () => {
  await a.registry.registerTools({ tools: NAMES.map(echo) }, bearer('tok'));
  await until(async () => NAMES.every((n) => b.app.deps.registry.lookup('acme', n) !== undefined), 'B has the tools');
  for (const name of NAMES) {
    expect((await call(a, name)).isError).toBe(false);
    expect((await call(b, name)).isError).toBe(false);
  }
  await until(async () => (await toolsInHash()).length === NAMES.length, 'every tool flushed');
  // B counts gone_0 again: held there (maybe on its way to Redis) as A removes it.
  await call(b, 'gone_0');
  for (const name of NAMES.slice(0, 4)) expect((await a.registry.removeTool({ name }, bearer('tok'))).removed).toBe(true);
  await until(async () => (await toolsInHash()).join() === 'kept', "only kept's fields left");
  await sleep(5 * FLUSH_MS);
  expect(await toolsInHash()).toEqual(['kept']);
  expect(await stats(a)).toEqual({ kept: 2 });
  expect(await stats(b)).toEqual({ kept: 2 });
});

test('a name registered again after its removal starts at zero calls', async () => {
  await a.registry.registerTools({ tools: [echo('gone_0')] }, bearer('tok'));
  await until(async () => b.app.deps.registry.lookup('acme', 'gone_0') !== undefined, 'B has gone_0');
  expect(await stats(b)).toEqual({ gone_0: 0, kept: 2 });
  await call(b, 'gone_0');
  await until(async () => (await stats(a)).gone_0 === 1, 'gone_0 counted once');
});

test("a tenant's hash takes in maxToolsPerTenant tools: calls of further tools are left out, the counted tools' new counters are not", async () => {
  const local = createToolStats();
  const shared = createSharedToolStats({ local, logger: SILENT_LOGGER, maxToolsPerTenant: 2, keyPrefix: 'capped', flushIntervalMs: 3_600_000, connect: () => connectRedis(redis.url, { commandTimeoutMs: 2_000 }) });
  const summary = (tool: string, over: Partial<CallSummary> = {}): CallSummary => ({ tenant: 'acme', tool, known: true, outcome: 'ok', attempts: 1, durationMs: 1, validationFailed: false, timedOut: false, retried: false, idempotentHit: false, bounded: false, unexpected: false, ...over });
  try {
    // Two tools with every counter fill the hash (18 fields: 9 counters each).
    for (const tool of ['x', 'y']) shared.record(summary(tool, { outcome: 'TIMEOUT', attempts: 2, validationFailed: true, timedOut: true, retried: true, idempotentHit: true, bounded: true, unexpected: true }));
    const key = statsKeys('acme', '', 'capped').counts;
    // The first flushes may come before the connection is up: they are sent again.
    await until(async () => (await shared.flush(), (await probe.hlen(key)) === 18), 'the first two tools flushed');
    shared.record(summary('z'));
    shared.record(summary('x'));
    await shared.flush();
    expect(await probe.hlen(key)).toBe(18); // 2 tools, 9 counters each
    expect(await probe.hget(key, 'x\0calls')).toBe('2');
    expect(await probe.hexists(key, 'z\0calls')).toBe(0);
  } finally {
    await shared.close();
  }
});
