import { createBreakers, DEFAULT_BREAKER_SETTINGS, type Breakers } from '../../src/guards';

// A replica's breakers time their open period, their probe's lease and their rolling window on
// the process's monotonic clock, not the wall clock: an NTP step or a VM resumed from a pause moves
// Date.now() by minutes or hours at once. Stepped back an hour, an open breaker told callers to
// wait an hour and 30 s (its own timer half-opens it after 30 s); stepped forward past the probe's
// lease, it let a second probe in beside the first one, still running.

const FAIL = { ok: false, counts: true, durationMs: 1 } as const;
const TIMEOUT_MS = 1_000;
const HOUR_MS = 3_600_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let breakers: Breakers;
let stepMs = 0;
beforeEach(() => {
  stepMs = 0;
  const wall = Date.now;
  jest.spyOn(Date, 'now').mockImplementation(() => wall() + stepMs);
});
afterEach(() => {
  breakers.close();
  jest.restoreAllMocks();
});

test('an open breaker tells the wait until it half-opens, whatever the wall clock does', () => {
  breakers = createBreakers({ settingsFor: () => ({ ...DEFAULT_BREAKER_SETTINGS, consecutiveFailures: 1 }) });
  breakers.gate.record('fetch', breakers.gate.tryAcquire('fetch', TIMEOUT_MS)!, FAIL);
  expect(breakers.state('fetch')).toBe('open');
  expect(breakers.gate.retryAfterMs!('fetch')).toBeLessThanOrEqual(30_000);
  stepMs = -HOUR_MS;
  // Still about 30 s: the breaker half-opens then, and the retry policy and the model read this.
  expect(breakers.gate.retryAfterMs!('fetch')).toBeLessThanOrEqual(30_000);
  expect(breakers.gate.retryAfterMs!('fetch')).toBeGreaterThan(29_000);
});

test('a probe still out keeps the half-open slot when the wall clock jumps past its lease', async () => {
  breakers = createBreakers({ settingsFor: () => ({ ...DEFAULT_BREAKER_SETTINGS, consecutiveFailures: 1, halfOpenAfterMs: 30 }) });
  breakers.gate.record('fetch', breakers.gate.tryAcquire('fetch', TIMEOUT_MS)!, FAIL);
  await sleep(80);
  expect(breakers.state('fetch')).toBe('half_open');
  const probe = breakers.gate.tryAcquire('fetch', TIMEOUT_MS);
  expect(probe?.probe).toBe(true);
  // Ten minutes on the wall clock (past the 300 s lease) in no time at all: the probe has not
  // even reached its tool's timeout.
  stepMs = 10 * 60_000;
  expect(breakers.gate.tryAcquire('fetch', TIMEOUT_MS)).toBeUndefined();
  expect(breakers.gate.isOpen('fetch')).toBe(true);
});

test('failures stay in the rolling window for its length, not an hour more when the wall clock steps back', async () => {
  breakers = createBreakers({ settingsFor: () => ({ ...DEFAULT_BREAKER_SETTINGS, consecutiveFailures: 100, minCalls: 4, windowMs: 100, windowBuckets: 2 }) });
  const fail = () => breakers.gate.record('fetch', breakers.gate.tryAcquire('fetch', TIMEOUT_MS)!, FAIL);
  const succeed = () => breakers.gate.record('fetch', breakers.gate.tryAcquire('fetch', TIMEOUT_MS)!, { ...FAIL, ok: true });
  for (let i = 0; i < 3; i++) fail();
  succeed();
  succeed();
  succeed();
  expect(breakers.state('fetch')).toBe('closed');
  stepMs = -HOUR_MS;
  await sleep(250);
  // The window (100 ms) is long past: one failure in two calls is not 50% of four.
  succeed();
  fail();
  expect(breakers.state('fetch')).toBe('closed');
});
