import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError, HardError } from '../../src/errors';
import { createToolSlots } from '../../src/guards';
import { createAbortScope, type Release } from '../../src/pipeline';

// The slots of the concurrency caps, alone: who gets a slot, in what order, and when waiting ends.

const slots = createToolSlots([
  { match: ['one'], maxInFlight: 1, waitMs: 5_000, shared: false, fallbackMaxInFlight: 1, failClosed: false },
  { match: ['none*'], maxInFlight: 1, waitMs: 0, shared: false, fallbackMaxInFlight: 1, failClosed: false },
])!;
const shared = (name: string) => ({ tenant: '', name, timeoutMs: 30_000 });
const FAR = Date.now() + 60_000;

test('no policies, no slots: the pipeline asks nothing', () => {
  expect(createToolSlots([])).toBeUndefined();
  expect(slots.take(shared('other'), createAbortScope().signal, FAR)).toBeUndefined();
});

test('waiters get a slot in the order they asked; a second release does nothing', async () => {
  const signal = createAbortScope().signal;
  const first = slots.take(shared('one'), signal, FAR) as Release;
  const order: string[] = [];
  const second = (slots.take(shared('one'), signal, FAR) as Promise<Release>).then((release) => (order.push('second'), release));
  const third = (slots.take(shared('one'), signal, FAR) as Promise<Release>).then((release) => (order.push('third'), release));
  first();
  first();
  const releaseSecond = await second;
  await new Promise((r) => setImmediate(r));
  // The second release of `first` gave nothing to the third.
  expect(order).toEqual(['second']);
  releaseSecond();
  (await third)();
  expect(order).toEqual(['second', 'third']);
  // All given back: the next take is served at once.
  const again = slots.take(shared('one'), signal, FAR);
  expect(typeof again).toBe('function');
  (again as Release)();
});

test("a tenant's tool has slots of its own", () => {
  const signal = createAbortScope().signal;
  const mine = slots.take({ tenant: 'acme', name: 'none-shared', timeoutMs: 30_000 }, signal, FAR) as Release;
  const theirs = slots.take({ tenant: 'other', name: 'none-shared', timeoutMs: 30_000 }, signal, FAR) as Release;
  expect(() => slots.take({ tenant: 'acme', name: 'none-shared', timeoutMs: 30_000 }, signal, FAR)).toThrow(DispatchError);
  mine();
  theirs();
});

test('the wait ends at the deadline when that comes first, and at once on cancel', async () => {
  const signal = createAbortScope().signal;
  const held = slots.take(shared('one'), signal, FAR) as Release;
  const started = Date.now();
  const late = slots.take(shared('one'), signal, Date.now() + 100) as Promise<Release>;
  await expect(late).rejects.toMatchObject({ kind: ErrorKind.UNAVAILABLE, phase: 'before' });
  expect(Date.now() - started).toBeLessThan(1_000);

  const scope = createAbortScope();
  const cancelled = slots.take(shared('one'), scope.signal, FAR) as Promise<Release>;
  scope.abort(HardError.cancelled());
  await expect(cancelled).rejects.toBeInstanceOf(HardError);
  // Neither kept a place in line: the slot goes back to free.
  held();
  const next = slots.take(shared('one'), signal, FAR);
  expect(typeof next).toBe('function');
  (next as Release)();
});
