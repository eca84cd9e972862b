import { abortSubscribers, createAbortScope, delay } from '../../src/pipeline';

// A retry's backoff waits on the turn's signal and on dispatchd's drain: either ends it at once,
// and neither keeps a subscriber once the wait is over.

test('a backoff ends at once when the drain begins, with its reason, and leaves no subscriber', async () => {
  const turn = createAbortScope();
  const draining = new AbortController();
  const started = Date.now();
  const wait = delay(10_000, turn.signal, draining.signal);
  draining.abort('draining');
  await expect(wait).rejects.toBe('draining');
  expect(Date.now() - started).toBeLessThan(1000);
  expect(abortSubscribers(turn.signal)).toBe(0);
});

test('a backoff ended by the turn says the turn reason, and one that runs out leaves both signals unsubscribed', async () => {
  const turn = createAbortScope();
  const draining = new AbortController();
  const cut = delay(10_000, turn.signal, draining.signal);
  turn.abort('cancelled');
  await expect(cut).rejects.toBe('cancelled');
  expect(abortSubscribers(draining.signal)).toBe(0);
  const other = createAbortScope();
  await expect(delay(5, other.signal, draining.signal)).resolves.toBeUndefined();
  expect(abortSubscribers(other.signal)).toBe(0);
  expect(abortSubscribers(draining.signal)).toBe(0);
});

test('a drain begun before the backoff ends it before it starts', async () => {
  const turn = createAbortScope();
  const draining = new AbortController();
  draining.abort('draining');
  await expect(delay(10_000, turn.signal, draining.signal)).rejects.toBe('draining');
  expect(abortSubscribers(turn.signal)).toBe(0);
});
