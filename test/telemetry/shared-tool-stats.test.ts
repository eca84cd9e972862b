import { fromBinary, toBinary, create } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { GetToolStatsRequestSchema, GetToolStatsResponseSchema, type GetToolStatsResponse, type ToolStats } from '../../gen/dispatch/v1/registry_pb';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { json, startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { tokenEntry } from './metrics-app';

jest.setTimeout(60_000);

const FLUSH_MS = 50;
const STORE_TIMEOUT_MS = 300;

const CONFIG = (url: string) => `
tools:
  - name: echo
    effect: read_only
    builtin: { name: echo }
  - name: big
    effect: read_only
    max_result_chars: 100
    input_schema: '{"type":"object"}'
    http: { url: "${url}/big" }
  - name: weather
    effect: read_only
    input_schema: '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}'
    http: { url: "${url}/weather" }
limits: { store_timeout_ms: ${STORE_TIMEOUT_MS} }
auth:
  tokens:
${tokenEntry('acme', 'tok-acme', ['dispatch'])}${tokenEntry('globex', 'tok-globex', ['dispatch'])}`;

type App = Awaited<ReturnType<typeof startApp>>;

const savedFlush = process.env.DISPATCH_STATS_FLUSH_MS;
let redis: TestRedis;
let tools: ToolServer;
let weatherRuns = 0;
/** Two replicas sharing `redis`. */
let a: App;
let b: App;

beforeAll(async () => {
  process.env.DISPATCH_STATS_FLUSH_MS = String(FLUSH_MS);
  redis = await startRedis({ own: true, persistence: 'aof-always' });
  tools = await startToolServer({
    '/weather': async (req, res) => {
      weatherRuns++;
      await json({ temp: 20 })(req, res);
    },
    '/big': (_req, res) => void res.writeHead(200).end('x'.repeat(1000)),
  });
  [a, b] = await Promise.all([0, 1].map(() => startApp(CONFIG(tools.url), { redisUrl: redis.url })));
});

afterAll(async () => {
  if (savedFlush === undefined) delete process.env.DISPATCH_STATS_FLUSH_MS;
  else process.env.DISPATCH_STATS_FLUSH_MS = savedFlush;
  await a?.close();
  await b?.close();
  await tools?.close();
  await redis?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function dispatch(app: App, token: string, name: string, args: object) {
  const { results } = await app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name, arguments: JSON.stringify(args) }] }, { metadata: { authorization: `Bearer ${token}` } });
  return results[0]!;
}

/** GetToolStats's answer with its response headers and how long it took. */
interface StatsAnswer {
  readonly byTool: Readonly<Record<string, ToolStats>>;
  readonly scope: string | undefined;
  readonly warning: string | undefined;
  readonly ms: number;
}

function getToolStats(app: App, token: string): Promise<StatsAnswer> {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  const started = Date.now();
  let headers: grpc.Metadata | undefined;
  return new Promise((resolve, reject) => {
    const call = (app.registry.raw as grpc.Client).makeUnaryRequest(
      '/dispatch.v1.ToolRegistryService/GetToolStats',
      (m: object) => Buffer.from(toBinary(GetToolStatsRequestSchema, create(GetToolStatsRequestSchema, m))),
      (bytes: Buffer) => fromBinary(GetToolStatsResponseSchema, bytes),
      {},
      metadata,
      { deadline: Date.now() + 10_000 },
      (error: grpc.ServiceError | null, response?: GetToolStatsResponse) => {
        if (error) return reject(error);
        resolve({
          byTool: Object.fromEntries(response!.stats.map((s) => [s.tool, s])),
          scope: headers?.get('dispatch-stats-scope')[0]?.toString(),
          warning: headers?.get('dispatch-stats-warning')[0]?.toString(),
          ms: Date.now() - started,
        });
      },
    );
    call.on('metadata', (m) => (headers = m));
  });
}

/** Asks until `done` holds of the answer (at most 10 s), and returns that answer. */
async function statsWhen(app: App, token: string, done: (answer: StatsAnswer) => boolean): Promise<StatsAnswer> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const answer = await getToolStats(app, token);
    if (done(answer) || Date.now() > deadline) return answer;
    await sleep(FLUSH_MS);
  }
}

/** A hash as redis-cli prints it, field and value on lines of their own. */
function hashOf(key: string): Record<string, string> {
  const lines = redis.cli('HGETALL', key).split('\n');
  return Object.fromEntries(Array.from({ length: Math.floor(lines.length / 2) }, (_, i) => [lines[2 * i]!, lines[2 * i + 1]!]));
}

const callsOf = (answer: StatsAnswer, tool: string) => Number(answer.byTool[tool]?.calls ?? -1n);

test('calls made through replica A are in the calls and rates replica B answers', async () => {
  expect((await dispatch(a, 'tok-acme', 'weather', { city: 'Rome' })).isError).toBe(false);
  expect((await dispatch(a, 'tok-acme', 'weather', { city: 5 })).error?.message).toContain('city');
  expect((await dispatch(a, 'tok-acme', 'big', {})).truncated).toBe(true);
  const answer = await statsWhen(b, 'tok-acme', (s) => callsOf(s, 'weather') === 2 && callsOf(s, 'big') === 1);
  expect(answer.scope).toBe('service');
  expect(answer.warning).toBeUndefined();
  expect(answer.byTool.weather).toMatchObject({ calls: 2n, alerts: ['validation_failure: 50% > 15%'] });
  expect(answer.byTool.weather!.rates).toMatchObject({ validationFailure: 0.5, timeout: 0, retry: 0, resultBounding: 0 });
  expect(answer.byTool.big!.rates).toMatchObject({ resultBounding: 1, validationFailure: 0 });
  // Breaker state and health stay each replica's own: B has run nothing.
  expect(answer.byTool.weather).toMatchObject({ breakerState: 'closed', healthScore: 1 });
  expect(weatherRuns).toBe(1);
});

test('calls spread over both replicas add up in either answer, counted once each', async () => {
  for (let i = 0; i < 3; i++) await dispatch(a, 'tok-acme', 'echo', { i });
  for (let i = 0; i < 2; i++) await dispatch(b, 'tok-acme', 'echo', { i });
  expect(callsOf(await statsWhen(a, 'tok-acme', (s) => callsOf(s, 'echo') === 5), 'echo')).toBe(5);
  expect(callsOf(await statsWhen(b, 'tok-acme', (s) => callsOf(s, 'echo') === 5), 'echo')).toBe(5);
  await sleep(10 * FLUSH_MS);
  expect(callsOf(await getToolStats(a, 'tok-acme'), 'echo')).toBe(5);
});

test('tenants stay apart: another tenant’s calls land in its own hash and answer', async () => {
  const acmeBefore = hashOf('dispatch:stats:{tYWNtZQ}');
  expect(acmeBefore).toMatchObject({ 'weather\u0000calls': '2', 'weather\u0000validation_failures': '1' });
  await dispatch(b, 'tok-globex', 'weather', { city: 'Lima' });
  const globex = await statsWhen(a, 'tok-globex', (s) => callsOf(s, 'weather') === 1);
  expect(callsOf(globex, 'weather')).toBe(1);
  expect(globex.byTool.weather!.rates!.validationFailure).toBe(0);
  expect(callsOf(globex, 'echo')).toBe(0);
  expect(callsOf(globex, 'big')).toBe(0);
  expect(hashOf('dispatch:stats:{tYWNtZQ}')).toEqual(acmeBefore);
  expect(hashOf('dispatch:stats:{tZ2xvYmV4}')).toEqual({ 'weather\u0000calls': '1', 'weather\u0000attempts': '1' });
  const ttl = Number(redis.cli('TTL', 'dispatch:stats:{tZ2xvYmV4}'));
  expect(ttl).toBeGreaterThan(7 * 24 * 3600 - 60);
  expect(callsOf(await getToolStats(a, 'tok-acme'), 'weather')).toBe(2);
});

test('a frozen Redis: answers from this replica within the store timeout; the flush sent meanwhile counts once', async () => {
  const before = callsOf(await getToolStats(a, 'tok-acme'), 'echo');
  redis.signal('SIGSTOP');
  try {
    await dispatch(a, 'tok-acme', 'echo', { frozen: 1 });
    // Let flushes reach the frozen server and time out, more than once.
    await sleep(3 * STORE_TIMEOUT_MS);
    const local = await getToolStats(a, 'tok-acme');
    expect(local.scope).toBe('replica');
    expect(local.warning).toBe('redis is unreachable: the counts cover only the calls of the replica that answered');
    expect(local.ms).toBeLessThan(STORE_TIMEOUT_MS + 700);
    // A's own calls: 3 of the 5 echo calls plus this one.
    expect(callsOf(local, 'echo')).toBe(4);
  } finally {
    redis.signal('SIGCONT');
  }
  const shared = await statsWhen(b, 'tok-acme', (s) => callsOf(s, 'echo') === before + 1);
  expect(callsOf(shared, 'echo')).toBe(before + 1);
  await sleep(10 * FLUSH_MS);
  expect(callsOf(await getToolStats(b, 'tok-acme'), 'echo')).toBe(before + 1);
  expect(callsOf(await getToolStats(a, 'tok-acme'), 'echo')).toBe(before + 1);
});

test('a replica that closes flushes the counts it holds', async () => {
  const before = callsOf(await getToolStats(b, 'tok-acme'), 'echo');
  process.env.DISPATCH_STATS_FLUSH_MS = '3600000';
  const c = await startApp(CONFIG(tools.url), { redisUrl: redis.url }).finally(() => (process.env.DISPATCH_STATS_FLUSH_MS = String(FLUSH_MS)));
  try {
    await dispatch(c, 'tok-acme', 'echo', { from: 'c' });
    await sleep(5 * FLUSH_MS);
    expect(callsOf(await getToolStats(b, 'tok-acme'), 'echo')).toBe(before);
    expect(callsOf(await getToolStats(c, 'tok-acme'), 'echo')).toBe(before + 1);
  } finally {
    await c.close();
  }
  // B serves a read again for a second (readKeepMs): C's last flush shows within it.
  expect(callsOf(await statsWhen(b, 'tok-acme', (s) => callsOf(s, 'echo') === before + 1), 'echo')).toBe(before + 1);
});

test('Redis down: calls still run, GetToolStats answers from local counts at once, and the counts held meanwhile are flushed when it returns', async () => {
  const before = await getToolStats(b, 'tok-acme');
  expect(before.scope).toBe('service');
  await redis.stop('SIGKILL');
  try {
    expect((await dispatch(a, 'tok-acme', 'weather', { city: 'Oslo' })).isError).toBe(false);
    expect((await dispatch(a, 'tok-acme', 'weather', { city: 7 })).isError).toBe(true);
    expect((await dispatch(b, 'tok-acme', 'echo', { down: 1 })).isError).toBe(false);
    await sleep(5 * FLUSH_MS);
    const local = await getToolStats(a, 'tok-acme');
    expect(local).toMatchObject({ scope: 'replica', warning: expect.stringContaining('redis is unreachable') });
    expect(local.ms).toBeLessThan(STORE_TIMEOUT_MS + 700);
    // A's own weather calls: Rome, 5 (invalid), Oslo, 7 (invalid).
    expect(callsOf(local, 'weather')).toBe(4);
    expect(local.byTool.weather!.rates!.validationFailure).toBe(0.5);
  } finally {
    await redis.start();
  }
  const after = await statsWhen(b, 'tok-acme', (s) => s.scope === 'service' && callsOf(s, 'weather') === callsOf(before, 'weather') + 2 && callsOf(s, 'echo') === callsOf(before, 'echo') + 1);
  expect(after.scope).toBe('service');
  expect(callsOf(after, 'weather')).toBe(callsOf(before, 'weather') + 2);
  expect(callsOf(after, 'echo')).toBe(callsOf(before, 'echo') + 1);
  expect(after.byTool.weather!.rates!.validationFailure).toBeCloseTo(2 / 4);
});
