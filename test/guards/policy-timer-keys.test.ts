import { EventEmitter } from 'node:events';
import { parse } from 'yaml';
import { ConfigError } from '../../src/config';
import { createToolBreaker, DEFAULT_BREAKER_SETTINGS, parsePolicies, type BreakerState } from '../../src/guards';
import { linkSignal } from '../../src/pipeline/signals';

const problem = (text: string) => {
  try {
    parsePolicies(parse(text) as unknown[], 'dispatch.yaml');
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  return 'accepted';
};

const TOO_LONG = 'must be at most 2147483647 (milliseconds; Node runs longer timers at once), got 3000000000';

// Node fires a timer longer than 2^31 - 1 ms after 1 ms: an endpoint timeout of 3e9 blocked every
// call at once, a breaker's half_open_after_ms of 3e9 half-opened it at once.
describe('policies timer keys above 2^31 - 1 ms', () => {
  it.each([
    ['- endpoint: { url: "http://127.0.0.1:9/check", timeout_ms: 3000000000 }', 'policies[0].endpoint.timeout_ms'],
    ['- { match: a, breaker: { half_open_after_ms: 3000000000 } }', 'policies[0].breaker.half_open_after_ms'],
    ['- { match: a, breaker: { window_ms: 3000000000 } }', 'policies[0].breaker.window_ms'],
    ['- { match: a, breaker: { probe_lease_ms: 3000000000 } }', 'policies[0].breaker.probe_lease_ms'],
    ['- { match: a, concurrency: { max_in_flight: 1, wait_ms: 3000000000 } }', 'policies[0].concurrency.wait_ms'],
    ['- { match: a, rate: { per_second: 1, wait_ms: 3000000000 } }', 'policies[0].rate.wait_ms'],
  ])('refuses %s', (yaml, path) => {
    expect(problem(yaml)).toBe(`dispatch.yaml: ${path}: ${TOO_LONG}`);
    expect(problem(yaml.replace('3000000000', '2147483647'))).toBe('accepted');
  });
});

describe('linkSignal', () => {
  it('waits MAX_TIMER_MS for a longer timeout instead of firing at once', async () => {
    const link = linkSignal(new AbortController().signal, 3_000_000_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(link.signal.aborted).toBe(false);
    expect(link.timedOut()).toBe(false);
    link.dispose();
  });
});

describe('a tool breaker built with half_open_after_ms above 2^31 - 1', () => {
  it('stays open rather than half-opening after 1 ms', async () => {
    const states: BreakerState[] = [];
    const b = createToolBreaker({ ...DEFAULT_BREAKER_SETTINGS, consecutiveFailures: 1, halfOpenAfterMs: 3_000_000_000 }, new EventEmitter(), (s) => states.push(s), () => Date.now());
    const ticket = b.tryAcquire(1_000)!;
    b.record(ticket, { ok: false, counts: true });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(states).toEqual(['open']);
    b.shutdown();
  });
});
