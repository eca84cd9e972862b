import type { CallSummary } from '../../src/events';
import { SILENT_LOGGER } from '../../src/log';
import { connectRedis, whenReady } from '../../src/store/redis';
import { createToolStats } from '../../src/telemetry';
import { createSharedToolStats } from '../../src/telemetry/shared-tool-stats';
import { parseCounts, statsKeys } from '../../src/telemetry/stats-hash';
import { startRedis, type TestRedis } from '../helpers/redis-server';

// The shared tool stats' close is one of dispatchd's closing steps: bounded by the command timeout
// it waits for a flush still out, but when Redis did not answer that one, neither a second flush
// nor a QUIT is sent to wait out the timeout again (they took three timeouts, back to back).

jest.setTimeout(20_000);

const TIMEOUT_MS = 400;
const call = (over: Partial<CallSummary> = {}): CallSummary => ({ tenant: 't', tool: 'x', known: true, outcome: 'ok', attempts: 1, durationMs: 1, validationFailed: false, timedOut: false, retried: false, idempotentHit: false, bounded: false, unexpected: false, ...over });

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis({ own: true });
});
afterAll(async () => {
  redis?.signal('SIGCONT');
  await redis?.close();
});

/** Shared stats on a connection that is ready, the flush timer out of the way. */
async function statsOn(keyPrefix = 'close') {
  const client = connectRedis(redis.url, { commandTimeoutMs: TIMEOUT_MS });
  expect(await whenReady(client, 5_000)).toBe(true);
  return createSharedToolStats({ local: createToolStats(), logger: SILENT_LOGGER, connect: () => client, flushIntervalMs: 3_600_000, keyPrefix });
}

test('with Redis stalled and a flush out, close takes one command timeout, not three', async () => {
  const stats = await statsOn();
  stats.record(call());
  redis.signal('SIGSTOP');
  try {
    void stats.flush();
    stats.record(call({ tool: 'y' }));
    const started = Date.now();
    await stats.close();
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(took).toBeLessThan(2 * TIMEOUT_MS);
  } finally {
    redis.signal('SIGCONT');
  }
});

test('with Redis answering, close sends what a flush out left and what came after it', async () => {
  const prefix = `close${Date.now()}`;
  const stats = await statsOn(prefix);
  stats.record(call());
  void stats.flush();
  stats.record(call({ tool: 'y' }));
  await stats.close();
  const counts = parseCounts(Object.fromEntries(chunk(redis.cli('hgetall', statsKeys('t', 'any', prefix).counts).trim().split('\n'))));
  expect([...counts.keys()].sort()).toEqual(['x', 'y']);
  expect(counts.get('x')?.calls).toBe(1);
  expect(counts.get('y')?.calls).toBe(1);
});

/** redis-cli's HGETALL lines as [field, value] pairs. */
function chunk(lines: string[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < lines.length; i += 2) pairs.push([lines[i]!, lines[i + 1]!]);
  return pairs;
}
