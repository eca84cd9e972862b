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

function refusalOrTurn(run: () => unknown): string {
  try {
    return run() === undefined ? 'turn' : 'waits';
  } catch (error) {
    return (error as Error).message;
  }
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

test('calls refused together are told successive turns, not all the same next one', () => {
  const waved = createToolRates([policy('waved', 4, 1, 0)])!;
  expect(waved.take(tool('waved'), signal(), FAR)).toBeUndefined();
  const at: number[] = [];
  const told = [1, 2, 3].map(() => {
    at.push(performance.now());
    return refusalOf(() => waved.take(tool('waved'), signal(), FAR));
  });
  // 4 per second: the next turns are 250, 500 and 750 ms away, one for each (all three told the
  // next turn, two of them would be refused again when they came back). Each is told from when it
  // was refused: less the time between the two refusals (8 ms once in a full run on a loaded machine).
  const ms = told.map((e) => e.retryAfterMs!);
  expect(ms[0]).toBeLessThanOrEqual(250);
  expect(ms[1]! - ms[0]!).toBeGreaterThanOrEqual(249 - Math.ceil(at[1]! - at[0]!));
  expect(ms[2]! - ms[1]!).toBeGreaterThanOrEqual(249 - Math.ceil(at[2]! - at[1]!));
  expect(told[0]!.message).toMatch(/; its next turn is in \d+ ms; this call was not executed$/);
  expect(told[1]!.message).toMatch(/; its next turn is in \d+ ms, and 1 call refused before this one was told to come back first: this one's turn is in \d+ ms at the earliest; this call was not executed$/);
  expect(told[2]!.message).toMatch(/; its next turn is in \d+ ms, and 2 calls refused before this one were told to come back first: this one's turn is in \d+ ms at the earliest; this call was not executed$/);
  expect(told[2]!.suggestion).toBe(`Call it again in ${ms[2]} ms or later, or do something else first.`);
});

test('calls refused together each get a turn when they come back after their retry_after_ms', async () => {
  // Burst 2: a call coming back a little after its time (up to an interval) leaves the next one's
  // turn where it was told. With burst 1 each turn starts an interval after the last one taken,
  // so one coming back late delays the next one by as much (refused again, told the few ms left).
  const waved = createToolRates([policy('returning', 4, 2, 0)])!;
  for (let i = 0; i < 2; i++) expect(waved.take(tool('returning'), signal(), FAR)).toBeUndefined();
  const ms = [1, 2, 3].map(() => refusalOf(() => waved.take(tool('returning'), signal(), FAR)).retryAfterMs!);
  const asked = performance.now();
  const back = await Promise.all(ms.map((wait) => new Promise((r) => setTimeout(r, wait + 20)).then(() => refusalOrTurn(() => waved.take(tool('returning'), signal(), FAR)))));
  expect(back).toEqual(['turn', 'turn', 'turn']);
  expect(performance.now() - asked).toBeGreaterThanOrEqual(750);
});

test('a call waiting for its turn (wait_ms) takes it as before, whatever refused calls were told', async () => {
  const mixed = createToolRates([policy('mixed', 10, 1, 250)])!;
  const started = performance.now();
  expect(mixed.take(tool('mixed'), signal(), FAR)).toBeUndefined();
  const waits = [mixed.take(tool('mixed'), signal(), FAR), mixed.take(tool('mixed'), signal(), FAR)];
  // The fourth's turn is 300 ms away, past its 250 ms wait: refused, told 300 ms.
  const refused = refusalOf(() => mixed.take(tool('mixed'), signal(), FAR));
  expect(refused.retryAfterMs).toBeGreaterThan(250);
  expect(refused.retryAfterMs).toBeLessThanOrEqual(300);
  const times = await Promise.all(waits.map((w) => w!.then(() => performance.now() - started)));
  times.forEach((t, i) => expect(t).toBeGreaterThanOrEqual(100 * (i + 1) - 3));
});

test('a flood of refusals is told at most an hour ahead (retry_after_ms is a uint32)', () => {
  const flooded = createToolRates([{ match: ['flooded'], perSecond: 1 / 60, burst: 1, waitMs: 0, shared: false, text: '1 call per minute' }])!;
  expect(flooded.take(tool('flooded'), signal(), FAR)).toBeUndefined();
  const at: number[] = [];
  const told = Array.from({ length: 70 }, () => {
    at.push(performance.now());
    return refusalOf(() => flooded.take(tool('flooded'), signal(), FAR)).retryAfterMs!;
  });
  // A minute apart up to the hour, then the hour. Each is told from when it was refused: less the
  // time between the two refusals (4 ms once on a loaded machine, when this asked 59,999 flat).
  const between = at[58]! - at[57]!;
  expect(told[58]! - told[57]!).toBeGreaterThanOrEqual(59_999 - Math.ceil(between));
  expect(told[58]! - told[57]!).toBeLessThanOrEqual(60_001);
  expect(Math.max(...told)).toBeLessThanOrEqual(3_600_001);
  expect(told[69]).toBeGreaterThanOrEqual(3_599_990);
});
