import { EventEmitter } from 'node:events';
import { createBreakers, createToolBreaker, DEFAULT_BREAKER_SETTINGS, type BreakerSettings, type BreakerState } from '../../src/guards';

// An outcome is judged by the state its attempt was admitted in. An attempt admitted while the
// breaker was closed, that ends after it went half-open (a tool whose timeout is longer than
// half_open_after_ms), neither frees the probe's slot nor decides the probe's question; nor does a
// probe whose lease ran out once another has been admitted. Jest's fake timers drive both opossum's
// half-open timer and the breaker's clock.

const FAIL = { ok: false, counts: true } as const;
const OK = { ok: true, counts: true } as const;
const NEUTRAL = { ok: false, counts: false } as const;
const TIMEOUT_MS = 10_000;
const HALF_OPEN_MS = 30_000;

let made: { shutdown(): void }[] = [];
beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
afterEach(() => {
  made.forEach((b) => b.shutdown());
  made = [];
  jest.useRealTimers();
});

/** A breaker opened by `consecutiveFailures` failures while `stale` attempts it admitted first are still out. */
function openedWithStale(settings: Partial<BreakerSettings> = {}, staleCount = 1) {
  const states: BreakerState[] = [];
  const b = createToolBreaker({ ...DEFAULT_BREAKER_SETTINGS, consecutiveFailures: 2, halfOpenAfterMs: HALF_OPEN_MS, ...settings }, new EventEmitter(), (s) => states.push(s), () => Date.now());
  made.push(b);
  const stale = Array.from({ length: staleCount }, () => b.tryAcquire(TIMEOUT_MS)!);
  for (let i = 0; i < 2; i++) b.record(b.tryAcquire(TIMEOUT_MS)!, FAIL);
  expect(b.state()).toBe('open');
  return { b, states, stale };
}

function halfOpen(b: { state(): BreakerState }) {
  jest.advanceTimersByTime(HALF_OPEN_MS);
  expect(b.state()).toBe('half_open');
}

test('while closed every attempt gets the same ticket, so admitting one allocates nothing', () => {
  const { b, stale } = openedWithStale();
  expect(stale[0]).toEqual({ probe: false, generation: 0 });
  halfOpen(b);
  const probe = b.tryAcquire(TIMEOUT_MS);
  expect(probe).toMatchObject({ probe: true });
  expect(probe!.generation).toBeGreaterThan(stale[0]!.generation);
  b.record(probe!, OK);
  expect(b.tryAcquire(TIMEOUT_MS)).toBe(b.tryAcquire(TIMEOUT_MS));
});

test('a closed-period attempt ending with an outcome that does not count leaves the probe slot held', () => {
  const { b, stale } = openedWithStale();
  halfOpen(b);
  const probe = b.tryAcquire(TIMEOUT_MS)!;
  b.record(stale[0]!, NEUTRAL);
  expect(b.refusing()).toBe(true);
  expect(b.tryAcquire(TIMEOUT_MS)).toBeUndefined();
  b.record(probe, NEUTRAL);
  expect(b.tryAcquire(TIMEOUT_MS)).toMatchObject({ probe: true });
});

test.each([
  ['success does not close', OK, FAIL, 'open'],
  ['failure does not re-open', FAIL, OK, 'closed'],
] as const)("a closed-period %s a half-open breaker: the probe's outcome decides", (_, staleOutcome, probeOutcome, after) => {
  const { b, states, stale } = openedWithStale();
  halfOpen(b);
  const probe = b.tryAcquire(TIMEOUT_MS)!;
  b.record(stale[0]!, staleOutcome);
  expect(b.state()).toBe('half_open');
  expect(b.tryAcquire(TIMEOUT_MS)).toBeUndefined();
  b.record(probe, probeOutcome);
  expect(states).toEqual(['open', 'half_open', after]);
});

test('failures admitted before the outage count in the window once the breaker closed again, but never open it', () => {
  const { b, stale } = openedWithStale({}, 3);
  halfOpen(b);
  b.record(b.tryAcquire(TIMEOUT_MS)!, OK);
  expect(b.state()).toBe('closed');
  b.record(b.tryAcquire(TIMEOUT_MS)!, OK);
  for (const ticket of stale) b.record(ticket, FAIL);
  expect(b.state()).toBe('closed');
  expect(b.healthScore()).toBe(0.25);
  b.record(b.tryAcquire(TIMEOUT_MS)!, FAIL);
  expect(b.state()).toBe('closed');
  b.record(b.tryAcquire(TIMEOUT_MS)!, FAIL);
  expect(b.state()).toBe('open');
});

test("a probe's lease lasts its tool's timeout plus 30 s when that is longer than probe_lease_ms; a late first probe decides nothing once a second is out", () => {
  const { b, states } = openedWithStale({ probeLeaseMs: 300_000 });
  halfOpen(b);
  const first = b.tryAcquire(600_000)!;
  jest.advanceTimersByTime(600_000 + 29_999);
  expect(b.tryAcquire(TIMEOUT_MS)).toBeUndefined();
  jest.advanceTimersByTime(2);
  const second = b.tryAcquire(TIMEOUT_MS)!;
  expect(second).toMatchObject({ probe: true });
  b.record(first, OK);
  expect(b.state()).toBe('half_open');
  expect(b.tryAcquire(TIMEOUT_MS)).toBeUndefined();
  b.record(second, FAIL);
  expect(states).toEqual(['open', 'half_open', 'open']);
});

test("the gate passes tickets through; another breaker's ticket only counts in the window", () => {
  const breakers = createBreakers({ settingsFor: () => ({ ...DEFAULT_BREAKER_SETTINGS, consecutiveFailures: 1, halfOpenAfterMs: HALF_OPEN_MS }) });
  try {
    const a = breakers.gate.tryAcquire('a', TIMEOUT_MS)!;
    breakers.gate.record('b', breakers.gate.tryAcquire('b', TIMEOUT_MS)!, { ...FAIL, durationMs: 1 });
    jest.advanceTimersByTime(HALF_OPEN_MS);
    const probe = breakers.gate.tryAcquire('b', TIMEOUT_MS)!;
    breakers.gate.record('b', a, { ...NEUTRAL, durationMs: 1 });
    expect(breakers.gate.tryAcquire('b', TIMEOUT_MS)).toBeUndefined();
    breakers.gate.record('b', probe, { ...OK, durationMs: 1 });
    expect(breakers.state('b')).toBe('closed');
  } finally {
    breakers.close();
  }
});
