import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError, HardError } from '../../src/errors';
import { createToolRates } from '../../src/guards';
import type { RatePolicy } from '../../src/guards/policy-types';
import { createAbortScope } from '../../src/pipeline';

// Rate limits alone (each replica's own): when each attempt may start, what a refusal says, and
// what a cancelled wait gives back.

const policy = (match: string, perSecond: number, burst: number, waitMs: number): RatePolicy => ({ match: [match], perSecond, burst, waitMs, shared: false, text: `${perSecond} calls per second` });
const rates = createToolRates([policy('bursty', 10, 3, 0), policy('paced', 20, 1, 1_000), policy('slow', 10, 1, 1_000), policy('tenanted', 1, 1, 0)])!;
const tool = (name: string, tenant = '') => ({ tenant, name, timeoutMs: 30_000 });
const FAR = Date.now() + 60_000;
const signal = () => createAbortScope().signal;

function refusalOf(run: () => unknown): DispatchError {
  try {
    run();
  } catch (error) {
    return error as DispatchError;
  }
  throw new Error('not refused');
}

test('no policies, no limits; a tool no policy matches is not limited', () => {
  expect(createToolRates([])).toBeUndefined();
  expect(rates.take(tool('other'), signal(), FAR)).toBeUndefined();
});

test('a burst starts at once; the next is refused with when its turn comes', () => {
  for (let i = 0; i < 3; i++) expect(rates.take(tool('bursty'), signal(), FAR)).toBeUndefined();
  const refused = refusalOf(() => rates.take(tool('bursty'), signal(), FAR));
  expect(refused).toBeInstanceOf(DispatchError);
  expect(refused.kind).toBe(ErrorKind.UNAVAILABLE);
  expect(refused.phase).toBe('before');
  expect(refused.retryAfterMs).toBeGreaterThan(0);
  expect(refused.retryAfterMs).toBeLessThanOrEqual(100);
  expect(refused.message).toMatch(/^tool "bursty" is at its rate limit of 10 calls per second \(burst 3\) on this dispatch replica; its next turn is in \d+ ms; this call was not executed$/);
  expect(rates.refused().get('bursty')).toBe(1);
});

test('within its wait, each attempt waits for its turn: they start one interval apart', async () => {
  const started = performance.now();
  const times: number[] = [];
  const first = rates.take(tool('paced'), signal(), FAR);
  expect(first).toBeUndefined();
  await Promise.all([1, 2, 3].map(() => rates.take(tool('paced'), signal(), FAR)!.then(() => times.push(performance.now() - started))));
  // 20 per second: 50, 100 and 150 ms after the first. Timers fire late by the machine's load,
  // which is not checked, or early by up to ~1 ms (libuv counts from the loop's cached time, in
  // whole ms; 48.9 ms measured once for 50): only "not early by more than that" is checked.
  times.forEach((t, i) => expect(t).toBeGreaterThanOrEqual(50 * (i + 1) - 3));
});

test('an attempt whose wait its client cancels gives its turn back', async () => {
  expect(rates.take(tool('slow'), signal(), FAR)).toBeUndefined();
  const scope = createAbortScope();
  const waiting = rates.take(tool('slow'), scope.signal, FAR)!;
  setTimeout(() => scope.abort(HardError.cancelled()), 20);
  await expect(waiting).rejects.toMatchObject({ reason: 'CANCELLED' });
  // Its turn (100 ms after the first) is free again: the next waits for that one, not the one after.
  const asked = performance.now();
  await rates.take(tool('slow'), signal(), FAR);
  // ~80 ms here (to 100 ms after the first); ~180 ms had the cancelled turn been kept.
  expect(performance.now() - asked).toBeLessThan(150);
});

test("a wait past the call's deadline is refused; each tenant's tool has its own limit", () => {
  expect(rates.take(tool('tenanted', 'a'), signal(), FAR)).toBeUndefined();
  expect(rates.take(tool('tenanted', 'b'), signal(), FAR)).toBeUndefined();
  expect(refusalOf(() => rates.take(tool('tenanted', 'a'), signal(), FAR)).retryAfterMs).toBeGreaterThan(900);
  expect(rates.take(tool('slow'), signal(), FAR)).toBeInstanceOf(Promise);
  expect(refusalOf(() => rates.take(tool('slow'), signal(), Date.now() + 10)).message).toMatch(/its next turn is in \d+ ms, past the \d+ ms it may wait; this call was not executed$/);
  expect(rates.refused().get('a/tenanted')).toBe(1);
});
