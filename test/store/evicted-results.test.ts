import { createMemoryStore, newResultHandle } from '../../src/store';
import { createEvictedHandles, DEFAULT_MAX_EVICTED_HANDLES } from '../../src/store/evicted-handles';
import { resolveMemoryStoreOptions, spillBudgetRemedy } from '../../src/store/memory-store-options';

// A ReadResult handle stopped working seconds after it was issued when other sessions' large
// results pushed its spill out of the memory store's budget (maxSpilledChars), and ReadResult said
// only "not found (it may have expired)". The store now remembers a bounded number of handles it
// evicted for room, and tells them apart from expired and unknown ones (Store.evictedResult).

const MiB = 1024 * 1024;
const scopeOf = (sessionId: string) => ({ tenant: 't', sessionId });

/** Spills `chars` characters for a new handle of `sessionId`, living `ttlSeconds`; returns the handle. */
async function spill(store: ReturnType<typeof createMemoryStore>, sessionId: string, chars: number, ttlSeconds = 60): Promise<string> {
  const handle = newResultHandle(sessionId);
  await store.finishAttempt({ scope: scopeOf(sessionId), op: 'op', spill: { handle, text: 'x'.repeat(chars), ttlSeconds } });
  return handle;
}

test('a spill evicted for room past maxSpilledChars is told as evicted, with the budget; one still kept, or unknown, is not', async () => {
  const store = createMemoryStore({ maxSpilledChars: 1000 });
  const a = await spill(store, 'a', 400);
  const b = await spill(store, 'b', 400);
  const c = await spill(store, 'c', 400);
  // 1,200 characters: a goes (800 left, under a tenth below the budget).
  expect(await store.readResultPage('t', a, 0, 10)).toBeUndefined();
  expect(store.evictedResult?.('t', a)).toEqual({ budgetChars: 1000, remedy: 'raise limits.max_spilled_chars (the memory store option maxSpilledChars) to keep more, or read results sooner' });
  for (const kept of [b, c]) {
    expect(await store.readResultPage('t', kept, 0, 3)).toEqual({ text: 'xxx', totalChars: 400 });
    expect(store.evictedResult?.('t', kept)).toBeUndefined();
  }
  // Another tenant's handle of the same text, and a handle never issued, are not evicted ones.
  expect(store.evictedResult?.('other', a)).toBeUndefined();
  expect(store.evictedResult?.('t', newResultHandle('a'))).toBeUndefined();
  await store.close();
  expect(store.evictedResult?.('t', a)).toBeUndefined();
});

test('an expired spill, or one whose session ended, is not told as evicted; an evicted one only until it would have expired', async () => {
  let t = 1_000_000;
  const store = createMemoryStore({ maxSpilledChars: 1000, now: () => t });
  const expired = await spill(store, 'old', 400, 1);
  const ended = await spill(store, 'ended', 100);
  await store.endSession(scopeOf('ended'));
  t += 2_000;
  const b = await spill(store, 'b', 400, 10);
  await spill(store, 'c', 400, 10);
  // The expired spill made the room: no live one went.
  expect(await store.readResultPage('t', expired, 0, 1)).toBeUndefined();
  expect(store.evictedResult?.('t', expired)).toBeUndefined();
  expect(await store.readResultPage('t', ended, 0, 1)).toBeUndefined();
  expect(store.evictedResult?.('t', ended)).toBeUndefined();
  expect(store.evictedResult?.('t', b)).toBeUndefined();
  // Now only live spills are left: b goes for d, and is told so.
  await spill(store, 'd', 400, 10);
  expect(await store.readResultPage('t', b, 0, 1)).toBeUndefined();
  expect(store.evictedResult?.('t', b)).toBeDefined();
  await store.close();
});

test('the evicted live spill is remembered until its TTL would have ended', async () => {
  let t = 1_000_000;
  const store = createMemoryStore({ maxSpilledChars: 1000, now: () => t });
  const b = await spill(store, 'b', 400, 10);
  await spill(store, 'c', 400, 10);
  await spill(store, 'd', 400, 10);
  expect(store.evictedResult?.('t', b)?.budgetChars).toBe(1000);
  t += 9_999;
  expect(store.evictedResult?.('t', b)).toBeDefined();
  t += 1;
  expect(store.evictedResult?.('t', b)).toBeUndefined();
  await store.close();
});

test('at most maxEvictedHandles evicted handles are remembered, the oldest evictions forgotten first', async () => {
  const store = createMemoryStore({ maxSpilledChars: 100, maxEvictedHandles: 3 });
  const handles: string[] = [];
  // Each spill of 90 characters evicts the one before it (two pass the budget of 100).
  for (let i = 0; i < 10; i++) handles.push(await spill(store, `s${i}`, 90));
  const told = handles.map((h) => store.evictedResult?.('t', h) !== undefined);
  expect(told).toEqual([false, false, false, false, false, false, true, true, true, false]);
  await store.close();
});

test('createEvictedHandles holds its bound whatever is added, and its default is named', () => {
  expect(DEFAULT_MAX_EVICTED_HANDLES).toBe(10_000);
  expect(resolveMemoryStoreOptions({}).maxEvictedHandles).toBe(DEFAULT_MAX_EVICTED_HANDLES);
  expect(() => resolveMemoryStoreOptions({ maxEvictedHandles: 0 })).toThrow(/maxEvictedHandles/);
  const evicted = createEvictedHandles(50);
  let most = 0;
  for (let i = 0; i < 10_000; i++) {
    evicted.add('t', `h${i}`, 10);
    most = Math.max(most, evicted.size);
  }
  expect(most).toBe(50);
  expect(evicted.has('t', 'h9999', 0)).toBe(true);
  expect(evicted.has('t', 'h9950', 0)).toBe(true);
  expect(evicted.has('t', 'h9949', 0)).toBe(false);
  // Past its TTL it is forgotten as it is asked for.
  expect(evicted.has('t', 'h9999', 10)).toBe(false);
  expect(evicted.size).toBe(49);
  evicted.forget('t', 'h9998');
  expect(evicted.has('t', 'h9998', 0)).toBe(false);
});

test('the remedy of the default budget names limits.max_spilled_chars, and says when it was scaled down to the heap', () => {
  const full = spillBudgetRemedy(resolveMemoryStoreOptions({ heapLimitBytes: 4096 * MiB }));
  expect(full).toBe(
    'that budget is limits.max_spilled_chars, 33554432 characters by default: raise it (with the heap: node --max-old-space-size), read results sooner, or run with Redis (--redis), whose results are kept under its own memory bounds (docs/redis.md)',
  );
  expect(spillBudgetRemedy(resolveMemoryStoreOptions({ heapLimitBytes: 256 * MiB }))).toContain('by default, scaled down to this heap: raise it');
  expect(spillBudgetRemedy(resolveMemoryStoreOptions({ maxSpilledChars: 1000 }))).toContain('raise limits.max_spilled_chars');
});
