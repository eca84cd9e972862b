import { EventEmitter } from 'node:events';
import { createBreakers, createToolBreaker, DEFAULT_BREAKER_SETTINGS, type BreakerOutcome, type BreakerSettings, type BreakerState, type ToolBreaker } from '../../src/guards';

const FAIL = { ok: false, counts: true } as const;
const OK = { ok: true, counts: true } as const;
const NEUTRAL = { ok: false, counts: false } as const;
const TIMEOUT_MS = 1_000;

/** Admits an attempt (expected to be let in) and records its outcome at once. */
function ran(b: ToolBreaker, outcome: BreakerOutcome): void {
  const ticket = b.tryAcquire(TIMEOUT_MS);
  if (!ticket) throw new Error('the breaker refused the attempt');
  b.record(ticket, outcome);
}

function breaker(settings: Partial<BreakerSettings> = {}) {
  let t = 1_000_000;
  const states: BreakerState[] = [];
  const b = createToolBreaker({ ...DEFAULT_BREAKER_SETTINGS, ...settings }, new EventEmitter(), (s) => states.push(s), () => t);
  return { b, states, advance: (ms: number) => (t += ms) };
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a tool breaker', () => {
  const made: { b: { shutdown(): void } }[] = [];
  const track = <T extends { b: { shutdown(): void } }>(x: T) => (made.push(x), x);
  afterEach(() => made.splice(0).forEach((x) => x.b.shutdown()));

  test('opens on the 5th consecutive counted failure, not the 4th', () => {
    const { b, states } = track(breaker());
    for (let i = 0; i < 4; i++) ran(b, FAIL);
    expect(b.state()).toBe('closed');
    ran(b, FAIL);
    expect(b.state()).toBe('open');
    expect(b.tryAcquire(TIMEOUT_MS)).toBeUndefined();
    expect(states).toEqual(['open']);
  });

  test('a success resets the consecutive count; an outcome that does not count neither adds nor resets', () => {
    const { b } = track(breaker());
    for (let i = 0; i < 4; i++) ran(b, FAIL);
    ran(b, OK);
    for (let i = 0; i < 4; i++) ran(b, FAIL);
    expect(b.state()).toBe('closed');
    ran(b, NEUTRAL);
    ran(b, { ok: true, counts: false });
    expect(b.state()).toBe('closed');
    ran(b, FAIL);
    expect(b.state()).toBe('open');
  });

  test('opens at >= 50% failures once the window holds 10 calls, not before', () => {
    const { b } = track(breaker());
    for (const ok of [false, true, false, true, false, true, false]) ran(b, ok ? OK : FAIL);
    expect(b.state()).toBe('closed');
    for (const ok of [true, true]) ran(b, ok ? OK : FAIL);
    expect(b.state()).toBe('closed');
    ran(b, FAIL);
    expect(b.state()).toBe('open');
  });

  test('failures older than the window no longer count', () => {
    const { b, advance } = track(breaker({ windowMs: 60_000, windowBuckets: 10 }));
    for (let i = 0; i < 4; i++) {
      ran(b, FAIL);
      ran(b, OK);
    }
    advance(61_000);
    for (let i = 0; i < 5; i++) ran(b, OK);
    ran(b, FAIL);
    ran(b, FAIL);
    expect(b.state()).toBe('closed');
    expect(b.healthScore()).toBeCloseTo(5 / 7);
  });

  test('half-open admits a single probe; a successful probe closes it', async () => {
    const { b, states } = track(breaker({ consecutiveFailures: 1, halfOpenAfterMs: 40 }));
    ran(b, FAIL);
    expect(b.refusing()).toBe(true);
    await sleep(80);
    expect(b.state()).toBe('half_open');
    expect(b.refusing()).toBe(false);
    const probe = b.tryAcquire(TIMEOUT_MS);
    expect(probe?.probe).toBe(true);
    expect(b.refusing()).toBe(true);
    expect(b.tryAcquire(TIMEOUT_MS)).toBeUndefined();
    b.record(probe!, OK);
    expect(b.state()).toBe('closed');
    expect(b.tryAcquire(TIMEOUT_MS)?.probe).toBe(false);
    expect(states).toEqual(['open', 'half_open', 'closed']);
    expect(b.healthScore()).toBe(1);
  });

  test('a failed probe reopens it; an outcome that does not count frees the probe', async () => {
    const { b, states } = track(breaker({ consecutiveFailures: 1, halfOpenAfterMs: 40 }));
    ran(b, FAIL);
    await sleep(80);
    ran(b, NEUTRAL);
    expect(b.state()).toBe('half_open');
    ran(b, FAIL);
    expect(b.state()).toBe('open');
    expect(b.tryAcquire(TIMEOUT_MS)).toBeUndefined();
    expect(b.healthScore()).toBe(0);
    await sleep(80);
    expect(states).toEqual(['open', 'half_open', 'open', 'half_open']);
  });

  test('a probe that never reports frees the slot after its lease: probe_lease_ms, or its tool timeout plus 30 s if longer', async () => {
    const { b, advance } = track(breaker({ consecutiveFailures: 1, halfOpenAfterMs: 30, probeLeaseMs: 40_000 }));
    ran(b, FAIL);
    await sleep(60);
    expect(b.tryAcquire(TIMEOUT_MS)).toBeDefined();
    advance(39_999);
    expect(b.tryAcquire(TIMEOUT_MS)).toBeUndefined();
    advance(2);
    expect(b.tryAcquire(20_000)).toBeDefined();
    advance(49_999);
    expect(b.tryAcquire(TIMEOUT_MS)).toBeUndefined();
    advance(2);
    expect(b.tryAcquire(TIMEOUT_MS)).toBeDefined();
  });
});

describe('the breakers of a replica', () => {
  test('one per tool, created on first use; stats for unknown tools; the gate is pure on isOpen', () => {
    const seen: string[] = [];
    const breakers = createBreakers({ settingsFor: (tool) => ({ ...DEFAULT_BREAKER_SETTINGS, consecutiveFailures: tool === 'fragile' ? 1 : 5 }), onState: (tool, s) => seen.push(`${tool}:${s}`) });
    try {
      expect(breakers.gate.isOpen('fragile')).toBe(false);
      expect(breakers.state('fragile')).toBe('closed');
      expect(breakers.healthScore('fragile')).toBe(1);
      for (const tool of ['fragile', 'sturdy']) breakers.gate.record(tool, breakers.gate.tryAcquire(tool, TIMEOUT_MS)!, { ...FAIL, durationMs: 1 });
      expect(breakers.gate.isOpen('fragile')).toBe(true);
      expect(breakers.gate.tryAcquire('fragile', TIMEOUT_MS)).toBeUndefined();
      expect(breakers.gate.tryAcquire('sturdy', TIMEOUT_MS)).toBeDefined();
      expect(breakers.gate.state('fragile')).toBe('open');
      expect(seen).toEqual(['fragile:open']);
    } finally {
      breakers.close();
    }
  });

  test('past maxBreakers the oldest closed breaker is dropped, never an open one', () => {
    const breakers = createBreakers({ maxBreakers: 2, settingsFor: (tool) => ({ ...DEFAULT_BREAKER_SETTINGS, consecutiveFailures: tool === 'a' ? 1 : 2 }) });
    try {
      const fail = (tool: string) => breakers.gate.record(tool, breakers.gate.tryAcquire(tool, TIMEOUT_MS)!, { ...FAIL, durationMs: 0 });
      fail('a');
      fail('b');
      breakers.gate.tryAcquire('c', TIMEOUT_MS);
      fail('b');
      expect(breakers.state('b')).toBe('closed');
      expect(breakers.state('a')).toBe('open');
    } finally {
      breakers.close();
    }
  });
});
