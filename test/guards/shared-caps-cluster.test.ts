import { createToolRates, createToolSlots } from '../../src/guards';
import { createLogger } from '../../src/log';
import { createAbortScope } from '../../src/pipeline';
import { connectRedis, whenReady } from '../../src/store/redis';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-server';
import { json, startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { expectQuickHandoffs, HANDOFF_POLICY, handoffTool } from './slot-handoffs';

// Shared guards on a Redis Cluster (three masters on loopback). A `shared: true` concurrency cap:
// the slots are leases on the master of the tool's key, and a slot given back on one replica
// wakes the call waiting on the other through the cluster bus (release-slot.lua publishes on that
// master, the waiting replica listens on any). A `shared: true` rate limit: one GCRA time on the
// master of the tool's key.

jest.setTimeout(60_000);

const yaml = (url: string) => `
tools:${handoffTool(url)}
  - name: paced
    effect: read_only
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${url}/paced" }
policies:${HANDOFF_POLICY}
  - match: paced
    rate: { per_second: 10, burst: 1, wait_ms: 3000, shared: true }
`;

let cluster: TestRedisCluster;
let tools: ToolServer;
let a: Awaited<ReturnType<typeof startApp>>;
let b: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  cluster = await startRedisCluster(3);
  tools = await startToolServer({ '/handoff': json({ ok: true }, 450), '/paced': json({ ok: true }) });
  a = await startApp(yaml(tools.url), { redisUrl: cluster.url });
  b = await startApp(yaml(tools.url), { redisUrl: cluster.url });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await tools?.close();
  await cluster?.close();
});

test('on a Cluster, calls on two replicas take turns, each starting as soon as the slot is given back', async () => {
  await expectQuickHandoffs(a, b, tools);
});

test('on a Cluster, a shared rate limit spaces the calls of both replicas together', async () => {
  let n = 0;
  const results = await Promise.all([a, b, a, b].map(async (app) => (await app.dispatch.dispatch({ sessionId: `r${++n}`, calls: [{ id: 'c', name: 'paced', arguments: `{"n":${n}}` }] })).results[0]!));
  expect(results.map((r) => r.isError)).toEqual([false, false, false, false]);
  const starts = tools.received.filter((r) => r.path === '/paced').map((r) => r.start).sort((x, y) => x - y);
  expect(starts).toHaveLength(4);
  // 10 per second in all: ~100 ms apart (two replicas alone would start two at once).
  for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(25);
});

test('on a Cluster, a tenant whose name holds braces keeps its shared cap and rate limit on one slot', async () => {
  // A tenant named by a client certificate may hold anything: "}odd" made the keys' hash tag
  // empty, so a script's keys fell on different slots (CROSSSLOT) and every replica fell back.
  const lines: string[] = [];
  const logger = createLogger('warn', (line) => lines.push(line) > 0);
  const redis = connectRedis(cluster.url);
  try {
    expect(await whenReady(redis, 10_000)).toBe(true);
    const tool = { tenant: '}odd{', name: 'braced', timeoutMs: 1_000 };
    const slots = createToolSlots([{ match: ['braced'], maxInFlight: 1, waitMs: 0, shared: true, fallbackMaxInFlight: 1, failClosed: false }], { redis, logger })!;
    const rates = createToolRates([{ match: ['braced'], perSecond: 1, burst: 1, waitMs: 0, shared: true, text: '1 call per second' }], { redis, logger })!;
    const signal = createAbortScope().signal;
    const release = await slots.take(tool, signal, Date.now() + 10_000);
    await rates.take(tool, signal, Date.now() + 10_000);
    // Shared: a second replica's cap and limit see them taken.
    const other = createToolSlots([{ match: ['braced'], maxInFlight: 1, waitMs: 0, shared: true, fallbackMaxInFlight: 1, failClosed: false }], { redis, logger })!;
    await expect(Promise.resolve().then(() => other.take(tool, signal, Date.now() + 10_000))).rejects.toThrow(/on all dispatch replicas together/);
    await expect(Promise.resolve().then(() => rates.take(tool, signal, Date.now() + 10_000))).rejects.toThrow(/on all dispatch replicas together/);
    release!();
    expect(lines).toEqual([]);
  } finally {
    redis.disconnect();
  }
});
