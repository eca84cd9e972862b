import { createAbortScope, type Release } from '../../src/pipeline';
import { ResourceLocks } from '../../src/waves';

// The per-turn resource table that keeps attempts on one key from overlapping when a policy
// rewrote their arguments onto the same resource.

const NEVER = createAbortScope().signal;

test('arguments that name no resource hold nothing', () => {
  const locks = new ResourceLocks();
  expect(locks.hold('', { path: 'a' }, NEVER)).toBeUndefined();
  expect(locks.hold('/path', { other: 1 }, NEVER)).toBeUndefined();
});

test('a free resource is held at once; the next attempt on it waits for the release', async () => {
  const locks = new ResourceLocks();
  const first = locks.hold('/path', { path: 'a' }, NEVER);
  expect(typeof first).toBe('function');
  // Another key is free; the same key, spelled with its object keys in another order, is not.
  expect(typeof locks.hold('/path', { path: 'b' }, NEVER)).toBe('function');
  const objectKey = locks.hold('/path', { path: { x: 1, y: 2 } }, NEVER);
  expect(typeof objectKey).toBe('function');
  const sameObject = locks.hold('/path', { path: { y: 2, x: 1 } }, NEVER);
  expect(sameObject).toBeInstanceOf(Promise);
  const second = locks.hold('/path', { path: 'a' }, NEVER);
  expect(second).toBeInstanceOf(Promise);
  let granted = false;
  void (second as Promise<Release>).then(() => (granted = true));
  await new Promise(setImmediate);
  expect(granted).toBe(false);
  (first as Release)();
  await new Promise(setImmediate);
  expect(granted).toBe(true);
  (objectKey as Release)();
  await expect(sameObject).resolves.toEqual(expect.any(Function));
});

test('waiters are served in the order they asked, one at a time; a second release does nothing', async () => {
  const locks = new ResourceLocks();
  const first = locks.hold('/path', { path: 'a' }, NEVER) as Release;
  const order: number[] = [];
  const waiters = [1, 2, 3].map((n) => (locks.hold('/path', { path: 'a' }, NEVER) as Promise<Release>).then((release) => (order.push(n), release)));
  first();
  first();
  await new Promise(setImmediate);
  expect(order).toEqual([1]);
  (await waiters[0]!)();
  await new Promise(setImmediate);
  expect(order).toEqual([1, 2]);
  (await waiters[1]!)();
  (await waiters[2]!)();
  // Everything released: the key is free again.
  expect(typeof locks.hold('/path', { path: 'a' }, NEVER)).toBe('function');
});

test('a waiter whose turn is aborted gives up with CANCELLED and leaves the line', async () => {
  const locks = new ResourceLocks();
  const scope = createAbortScope();
  const first = locks.hold('/path', { path: 'a' }, NEVER) as Release;
  const aborted = locks.hold('/path', { path: 'a' }, scope.signal) as Promise<Release>;
  const next = locks.hold('/path', { path: 'a' }, NEVER) as Promise<Release>;
  scope.abort(new Error('sibling failed'));
  await expect(aborted).rejects.toMatchObject({ reason: 'CANCELLED' });
  first();
  // The line skipped the aborted waiter.
  const release = await next;
  release();
  expect(typeof locks.hold('/path', { path: 'a' }, NEVER)).toBe('function');
  // A signal already aborted is refused without waiting.
  await expect(locks.hold('/path', { path: 'a' }, scope.signal)).rejects.toMatchObject({ reason: 'CANCELLED' });
});
