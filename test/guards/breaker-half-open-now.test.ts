import { EventEmitter } from 'node:events';
import { createBreakers, createToolBreaker, DEFAULT_BREAKER_SETTINGS, type BreakerSettings, type BreakerState, type ToolBreaker } from '../../src/guards';

// ToolBreaker.halfOpenNow: a worker hosting the tool connected, so an open breaker half-opens at
// once rather than after halfOpenAfterMs (opossum still holds it open until its timer fires).

const FAIL = { ok: false, counts: true } as const;
const OK = { ok: true, counts: true } as const;
const TIMEOUT_MS = 1_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const made: ToolBreaker[] = [];
afterEach(() => made.splice(0).forEach((b) => b.shutdown()));

function opened(settings: Partial<BreakerSettings> = {}) {
  let t = 1_000_000;
  const states: BreakerState[] = [];
  const b = createToolBreaker({ ...DEFAULT_BREAKER_SETTINGS, consecutiveFailures: 1, ...settings }, new EventEmitter(), (s) => states.push(s), () => t);
  made.push(b);
  b.record(b.tryAcquire(TIMEOUT_MS)!, FAIL);
  expect(b.state()).toBe('open');
  return { b, states, advance: (ms: number) => (t += ms) };
}

test('an open breaker half-opens at once and lets one probe through; the probe succeeding closes it', () => {
  const { b, states } = opened();
  b.halfOpenNow();
  expect(b.state()).toBe('half_open');
  expect(b.refusing()).toBe(false);
  expect(b.retryAfterMs()).toBeUndefined();
  const probe = b.tryAcquire(TIMEOUT_MS)!;
  expect(probe.probe).toBe(true);
  expect(b.tryAcquire(TIMEOUT_MS)).toBeUndefined();
  expect(b.refusing()).toBe(true);
  b.record(probe, OK);
  expect(b.state()).toBe('closed');
  expect(states).toEqual(['open', 'half_open', 'closed']);
});

test('the probe failing opens it for a whole halfOpenAfterMs from then, told as open (no closed between)', () => {
  const { b, states, advance } = opened({ halfOpenAfterMs: 30_000 });
  advance(20_000);
  b.halfOpenNow();
  b.record(b.tryAcquire(TIMEOUT_MS)!, FAIL);
  expect(b.state()).toBe('open');
  expect(b.retryAfterMs()).toBe(30_000);
  expect(b.tryAcquire(TIMEOUT_MS)).toBeUndefined();
  expect(states).toEqual(['open', 'half_open', 'open']);
});

test('an outcome that does not count frees the probe and keeps it half-open', () => {
  const { b } = opened();
  b.halfOpenNow();
  b.record(b.tryAcquire(TIMEOUT_MS)!, { ok: false, counts: false });
  expect(b.state()).toBe('half_open');
  expect(b.tryAcquire(TIMEOUT_MS)?.probe).toBe(true);
});

test('closed or half-open, nothing changes', () => {
  const { b, states } = opened();
  b.halfOpenNow();
  const probe = b.tryAcquire(TIMEOUT_MS)!;
  b.halfOpenNow();
  expect(b.tryAcquire(TIMEOUT_MS)).toBeUndefined();
  b.record(probe, OK);
  b.halfOpenNow();
  expect(b.state()).toBe('closed');
  expect(states).toEqual(['open', 'half_open', 'closed']);
});

test("opossum's own timer firing while it is half-open early keeps the probe out, and tells nothing", async () => {
  const { b, states } = opened({ halfOpenAfterMs: 50 });
  b.halfOpenNow();
  const probe = b.tryAcquire(TIMEOUT_MS)!;
  await sleep(120);
  expect(b.state()).toBe('half_open');
  expect(b.tryAcquire(TIMEOUT_MS)).toBeUndefined();
  b.record(probe, FAIL);
  expect(b.state()).toBe('open');
  await sleep(120);
  expect(b.state()).toBe('half_open');
  expect(states).toEqual(['open', 'half_open', 'open', 'half_open']);
});

test('the breakers list the open ones, half-open a tool by its key, and leave a tool never seen alone', () => {
  const breakers = createBreakers({ settingsFor: () => ({ ...DEFAULT_BREAKER_SETTINGS, consecutiveFailures: 1 }) });
  try {
    breakers.gate.record('t/w', breakers.gate.tryAcquire('t/w', TIMEOUT_MS)!, { ...FAIL, durationMs: 1 });
    breakers.gate.record('t/ok', breakers.gate.tryAcquire('t/ok', TIMEOUT_MS)!, { ...OK, durationMs: 1 });
    expect(breakers.gate.isOpen('t/w')).toBe(true);
    expect(breakers.gate.openTools!()).toEqual(['t/w']);
    breakers.gate.halfOpen!('other');
    expect(breakers.gate.size).toBe(2);
    breakers.gate.halfOpen!('t/w');
    expect(breakers.state('t/w')).toBe('half_open');
    expect(breakers.gate.openTools!()).toEqual([]);
    expect(breakers.gate.isOpen('t/w')).toBe(false);
  } finally {
    breakers.close();
  }
});

// A host told again (a replica that subscribed again re-announcing its workers) is no new chance
// for a tool whose own failures opened its breaker: only one that calls finding no host opened
// half-opens then. Before, every re-announcement half-opened both, one probe of a failing tool each.
describe('onlyIfNoHost', () => {
  const NO_HOST = { ok: false, counts: true, noHost: true } as const;

  test('half-opens a breaker whose opening failure found no host', () => {
    // opened() tripped it with a failure of the tool's own; the probe a new host let through found none.
    const { b } = opened();
    b.halfOpenNow();
    b.record(b.tryAcquire(TIMEOUT_MS)!, NO_HOST);
    expect(b.state()).toBe('open');
    b.halfOpenNow(true);
    expect(b.state()).toBe('half_open');
  });

  test("leaves open one the tool's own failures opened; a new host half-opens it", () => {
    const { b, states } = opened();
    b.halfOpenNow(true);
    expect(b.state()).toBe('open');
    b.halfOpenNow();
    expect(b.state()).toBe('half_open');
    expect(states).toEqual(['open', 'half_open']);
  });

  test('judges by the failure that opened it last: a probe failing on its own after a no-host opening', () => {
    const b = createToolBreaker({ ...DEFAULT_BREAKER_SETTINGS, consecutiveFailures: 2 }, new EventEmitter(), () => undefined, () => 1_000_000);
    made.push(b);
    b.record(b.tryAcquire(TIMEOUT_MS)!, FAIL);
    b.record(b.tryAcquire(TIMEOUT_MS)!, NO_HOST);
    expect(b.state()).toBe('open');
    b.halfOpenNow(true);
    b.record(b.tryAcquire(TIMEOUT_MS)!, FAIL);
    expect(b.state()).toBe('open');
    b.halfOpenNow(true);
    expect(b.state()).toBe('open');
  });

  test('the breakers pass it on by key', () => {
    const breakers = createBreakers({ settingsFor: () => ({ ...DEFAULT_BREAKER_SETTINGS, consecutiveFailures: 1 }) });
    try {
      breakers.gate.record('t/own', breakers.gate.tryAcquire('t/own', TIMEOUT_MS)!, { ...FAIL, durationMs: 1 });
      breakers.gate.record('t/gone', breakers.gate.tryAcquire('t/gone', TIMEOUT_MS)!, { ...NO_HOST, durationMs: 1 });
      breakers.gate.halfOpen!('t/own', true);
      breakers.gate.halfOpen!('t/gone', true);
      expect([breakers.state('t/own'), breakers.state('t/gone')]).toEqual(['open', 'half_open']);
    } finally {
      breakers.close();
    }
  });
});
