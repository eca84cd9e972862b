import type { CallSummary } from '../../src/events';
import type { Logger } from '../../src/log';
import { createToolStats, metricsListenFromEnv, rateWindow } from '../../src/telemetry';
import { MAX_RATE_WINDOW_BUCKETS } from '../../src/telemetry/rate-window';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp } from '../helpers/servers';
import { bearer, lookupConfig, metricsPortLogger } from './metrics-app';

jest.setTimeout(60_000);

const WINDOW_S = 2;
const CONFIG = lookupConfig(`{ rate_window_seconds: ${WINDOW_S}, rate_bucket_seconds: 1 }`);
// Across replicas a call reaches the other's window when its replica flushes it, and a window of 2
// buckets of 1 s holds a call for as little as 1 s: under load a read 1.1 s after the call found it
// counted all-time but past the window. Four buckets hold it 3 s at least.
const SHARED_WINDOW_S = 4;
const SHARED_CONFIG = lookupConfig(`{ rate_window_seconds: ${SHARED_WINDOW_S}, rate_bucket_seconds: 1 }`);

type App = Awaited<ReturnType<typeof startApp>>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const call = (app: App, args: object) => app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'lookup', arguments: JSON.stringify(args) }] }, bearer('tok-acme'));
const statsOf = async (app: App) => (await app.registry.getToolStats({ tool: 'lookup' }, bearer('tok-acme'))).stats[0]!;
type Stats = Awaited<ReturnType<typeof statsOf>>;

/** Asks `app` until `done` holds (at most 10 s) and returns the last answer. */
async function statsWhen(app: App, done: (s: Stats) => boolean): Promise<Stats> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const stats = await statsOf(app);
    if (done(stats) || Date.now() > deadline) return stats;
    await sleep(50);
  }
}

/** A bad call (its city missing: a validation failure), then once the window has passed a good one: the alert clears. */
async function badThenHealthy(caller: App, reader: App, before = 0n, windowSeconds = WINDOW_S): Promise<void> {
  await call(caller, {});
  const bad = await statsWhen(reader, (s) => s.calls === before + 1n);
  expect(bad).toMatchObject({ calls: before + 1n, windowCalls: 1n, windowSeconds, alerts: ['validation_failure: 100% > 15%', 'error: 100% > 50%'] });
  expect(bad.rates?.validationFailure).toBe(1);
  // Past the window the bad call no longer counts in the rates, and its alert is gone.
  const quiet = await statsWhen(reader, (s) => s.windowCalls === 0n);
  expect(quiet).toMatchObject({ calls: before + 1n, windowCalls: 0n, alerts: [] });
  await call(caller, { city: 'Rome' });
  const healthy = await statsWhen(reader, (s) => s.calls === before + 2n);
  expect(healthy).toMatchObject({ calls: before + 2n, windowCalls: 1n, alerts: [] });
  expect(healthy.rates?.validationFailure).toBe(0);
  // The all-time rates keep the bad calls.
  expect(healthy.allTimeRates?.validationFailure).toBe(Number(before + 1n) / Number(before + 2n));
}

test('a tool bad then healthy: its rates, alerts and dispatch_tool_rate cover the window, so its alert clears', async () => {
  const metrics = metricsPortLogger();
  const app = await startApp(CONFIG, { logger: metrics.logger, metricsListen: '127.0.0.1:0' });
  try {
    await call(app, {});
    const rate = async () => (await metrics.scrape()).value('dispatch_tool_rate', { tenant: 'acme', tool: 'lookup', rate: 'validation_failure' });
    expect(await rate()).toBe(1);
    const started = Date.now();
    await statsWhen(app, (s) => s.windowCalls === 0n);
    expect(Date.now() - started).toBeLessThan(WINDOW_S * 1000 + 500);
    expect(await rate()).toBe(0);
    await badThenHealthy(app, app, 1n);
  } finally {
    await app.close();
  }
});

describe('shared through Redis', () => {
  const savedFlush = process.env.DISPATCH_STATS_FLUSH_MS;
  let redis: TestRedis;
  let a: App;
  let b: App;

  beforeAll(async () => {
    process.env.DISPATCH_STATS_FLUSH_MS = '50';
    redis = await startRedis({ own: true });
    [a, b] = await Promise.all([0, 1].map(() => startApp(SHARED_CONFIG, { redisUrl: redis.url })));
  });

  afterAll(async () => {
    if (savedFlush === undefined) delete process.env.DISPATCH_STATS_FLUSH_MS;
    else process.env.DISPATCH_STATS_FLUSH_MS = savedFlush;
    await a?.close();
    await b?.close();
    await redis?.close();
  });

  test("a call on replica A counts in replica B's window, and leaves it when the window passes; the window hash keeps at most 60 buckets and expires", async () => {
    await badThenHealthy(a, b, 0n, SHARED_WINDOW_S);
    const [key, ...others] = redis.cli('KEYS', 'dispatch:stats:*:window').split('\n').filter((k) => k !== '');
    expect(others).toEqual([]);
    expect(Number(redis.cli('TTL', key!))).toBeGreaterThan(0); // -1 would be a hash without a TTL
    // One field per tool: its buckets, newest first, `bucket:9 counts`.
    const buckets = redis.cli('HGET', key!, 'lookup').trim().split(';');
    expect(buckets.length).toBeGreaterThanOrEqual(2);
    expect(buckets.length).toBeLessThanOrEqual(MAX_RATE_WINDOW_BUCKETS);
    for (const bucket of buckets) expect(bucket).toMatch(/^\d+:\d+(,\d+){8}$/);
  });
});

test('the local window: buckets by a clock, older ones forgotten, all-time counts kept', () => {
  let now = 1_000_000;
  const window = rateWindow(60, () => now, 4); // 15 buckets of 4 s
  const stats = createToolStats({ window });
  const summary = (over: Partial<CallSummary>) => ({ tenant: 't', tool: 'x', known: true, attempts: 1, validationFailed: false, timedOut: false, retried: false, idempotentHit: false, bounded: false, unexpected: false, ...over }) as CallSummary;
  stats.record(summary({ timedOut: true }));
  expect(stats.recent('t', 'x')).toMatchObject({ calls: 1, timeouts: 1 });
  now += 30_000;
  stats.record(summary({}));
  expect(stats.recent('t', 'x')).toMatchObject({ calls: 2, timeouts: 1 });
  now += 30_000;
  expect(stats.recent('t', 'x')).toMatchObject({ calls: 1, timeouts: 0 });
  now += 60_000;
  expect(stats.recent('t', 'x')).toMatchObject({ calls: 0 });
  expect(stats.get('t', 'x')).toMatchObject({ calls: 2, timeouts: 1 });
  expect(stats.recent('t', 'nothing')).toMatchObject({ calls: 0 });
  // A call per bucket for 16 minutes: the window holds the last 15 buckets' (the current one empty: 14).
  for (let i = 0; i < 240; i++, now += 4_000) stats.record(summary({}));
  expect(stats.recent('t', 'x').calls).toBe(window.buckets - 1);
  expect(stats.get('t', 'x')?.calls).toBe(242);
  expect(() => rateWindow(0)).toThrow('rateWindowSeconds');
  // At most 60 buckets: a day needs buckets of 1440 s.
  expect(() => rateWindow(3601)).toThrow('rateWindowSeconds');
  expect(rateWindow(86_400, Date.now, 1440).buckets).toBe(60);
});

test('OTEL_METRICS_EXPORTER: none turns the Prometheus endpoint off, prometheus keeps it, other values are logged and ignored', async () => {
  const lines: string[] = [];
  const logger: Logger = { debug() {}, info: (m) => void lines.push(`info ${m}`), warn: (m) => void lines.push(`warn ${m}`), error() {} };
  expect(metricsListenFromEnv('127.0.0.1:0', { OTEL_METRICS_EXPORTER: 'none' }, logger)).toBeUndefined();
  expect(metricsListenFromEnv('127.0.0.1:0', { OTEL_SDK_DISABLED: 'true' }, logger)).toBeUndefined();
  expect(metricsListenFromEnv('127.0.0.1:0', { OTEL_METRICS_EXPORTER: 'prometheus' }, logger)).toBe('127.0.0.1:0');
  expect(metricsListenFromEnv('127.0.0.1:0', {}, logger)).toBe('127.0.0.1:0');
  expect(lines).toEqual(['info metrics off: the Prometheus endpoint is not served', 'info metrics off: the Prometheus endpoint is not served']);
  lines.length = 0;
  expect(metricsListenFromEnv('127.0.0.1:0', { OTEL_METRICS_EXPORTER: 'otlp, Console' }, logger)).toBe('127.0.0.1:0');
  expect(metricsListenFromEnv(undefined, { OTEL_METRICS_EXPORTER: 'prometheus' }, logger)).toBeUndefined();
  expect(lines).toHaveLength(2);
  expect(lines[0]).toContain('unsupported OTEL_METRICS_EXPORTER values ignored');
  expect(lines[1]).toContain('--metrics-listen');

  // The whole app: with `none`, --metrics-listen serves nothing.
  const saved = process.env.OTEL_METRICS_EXPORTER;
  process.env.OTEL_METRICS_EXPORTER = 'none';
  const metrics = metricsPortLogger();
  try {
    const app = await startApp(CONFIG, { logger: metrics.logger, metricsListen: '127.0.0.1:0' });
    await app.close();
    expect(metrics.port()).toBe(0);
  } finally {
    if (saved === undefined) delete process.env.OTEL_METRICS_EXPORTER;
    else process.env.OTEL_METRICS_EXPORTER = saved;
  }
});
