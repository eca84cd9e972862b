import { EventEmitter } from 'node:events';
import { createBreakers, createToolBreaker, DEFAULT_BREAKER_SETTINGS, type BreakerSettings, type BreakerState } from '../../src/guards';

const FAIL = { ok: false, counts: true } as const;
const OK = { ok: true, counts: true } as const;
const NEUTRAL = { ok: false, counts: false } as const;

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
    for (let i = 0; i < 4; i++) b.record(FAIL);
    expect(b.state()).toBe('closed');
    expect(b.tryAcquire()).toBe(true);
    b.record(FAIL);
    expect(b.state()).toBe('open');
    expect(b.tryAcquire()).toBe(false);
    expect(states).toEqual(['open']);
  });

  test('a success resets the consecutive count; an outcome that does not count neither adds nor resets', () => {
    const { b } = track(breaker());
    for (let i = 0; i < 4; i++) b.record(FAIL);
    b.record(OK);
    for (let i = 0; i < 4; i++) b.record(FAIL);
    expect(b.state()).toBe('closed');
    b.record(NEUTRAL);
    b.record({ ok: true, counts: false });
    expect(b.state()).toBe('closed');
    b.record(FAIL);
    expect(b.state()).toBe('open');
  });

  test('opens at >= 50% failures once the window holds 10 calls, not before', () => {
    const { b } = track(breaker());
    for (const ok of [false, true, false, true, false, true, false]) b.record(ok ? OK : FAIL);
    expect(b.state()).toBe('closed');
    for (const ok of [true, true]) b.record(ok ? OK : FAIL);
    expect(b.state()).toBe('closed');
    b.record(FAIL);
    expect(b.state()).toBe('open');
  });

  test('failures older than the window no longer count', () => {
    const { b, advance } = track(breaker({ windowMs: 60_000, windowBuckets: 10 }));
    for (let i = 0; i < 4; i++) {
      b.record(FAIL);
      b.record(OK);
    }
    advance(61_000);
    for (let i = 0; i < 5; i++) b.record(OK);
    b.record(FAIL);
    b.record(FAIL);
    expect(b.state()).toBe('closed');
    expect(b.healthScore()).toBeCloseTo(5 / 7);
  });

  test('half-open admits a single probe; a successful probe closes it', async () => {
    const { b, states } = track(breaker({ consecutiveFailures: 1, halfOpenAfterMs: 40 }));
    b.record(FAIL);
    expect(b.refusing()).toBe(true);
    await sleep(80);
    expect(b.state()).toBe('half_open');
    expect(b.refusing()).toBe(false);
    expect(b.tryAcquire()).toBe(true);
    expect(b.refusing()).toBe(true);
    expect(b.tryAcquire()).toBe(false);
    b.record(OK);
    expect(b.state()).toBe('closed');
    expect(b.tryAcquire()).toBe(true);
    expect(states).toEqual(['open', 'half_open', 'closed']);
    expect(b.healthScore()).toBe(1);
  });

  test('a failed probe reopens it; an outcome that does not count frees the probe', async () => {
    const { b, states } = track(breaker({ consecutiveFailures: 1, halfOpenAfterMs: 40 }));
    b.record(FAIL);
    await sleep(80);
    expect(b.tryAcquire()).toBe(true);
    b.record(NEUTRAL);
    expect(b.state()).toBe('half_open');
    expect(b.tryAcquire()).toBe(true);
    b.record(FAIL);
    expect(b.state()).toBe('open');
    expect(b.tryAcquire()).toBe(false);
    expect(b.healthScore()).toBe(0);
    await sleep(80);
    expect(states).toEqual(['open', 'half_open', 'open', 'half_open']);
  });

  test('a probe that never reports frees the slot after its lease', async () => {
    const { b, advance } = track(breaker({ consecutiveFailures: 1, halfOpenAfterMs: 30, probeLeaseMs: 1000 }));
    b.record(FAIL);
    await sleep(60);
    expect(b.tryAcquire()).toBe(true);
    expect(b.tryAcquire()).toBe(false);
    advance(1001);
    expect(b.tryAcquire()).toBe(true);
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
      breakers.gate.record('fragile', { ...FAIL, durationMs: 1 });
      breakers.gate.record('sturdy', { ...FAIL, durationMs: 1 });
      expect(breakers.gate.isOpen('fragile')).toBe(true);
      expect(breakers.gate.tryAcquire('fragile')).toBe(false);
      expect(breakers.gate.tryAcquire('sturdy')).toBe(true);
      expect(breakers.gate.state('fragile')).toBe('open');
      expect(seen).toEqual(['fragile:open']);
    } finally {
      breakers.close();
    }
  });

  test('past maxBreakers the oldest closed breaker is dropped, never an open one', () => {
    const breakers = createBreakers({ maxBreakers: 2, settingsFor: (tool) => ({ ...DEFAULT_BREAKER_SETTINGS, consecutiveFailures: tool === 'a' ? 1 : 2 }) });
    try {
      breakers.gate.record('a', { ...FAIL, durationMs: 0 });
      breakers.gate.record('b', { ...FAIL, durationMs: 0 });
      breakers.gate.tryAcquire('c');
      breakers.gate.record('b', { ...FAIL, durationMs: 0 });
      expect(breakers.state('b')).toBe('closed');
      expect(breakers.state('a')).toBe('open');
    } finally {
      breakers.close();
    }
  });
});
