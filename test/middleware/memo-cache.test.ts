import { createMemoCache } from '../../src/middleware';

test('entries expire after their TTL', () => {
  let t = 0;
  const cache = createMemoCache({ now: () => t });
  cache.set('k', { text: 'v' }, 1000);
  t = 999;
  expect(cache.get('k')?.text).toBe('v');
  t = 1000;
  expect(cache.get('k')).toBeUndefined();
  expect(cache.size()).toBe(0);
});

test('bounded by entries (the least recently used tenth goes), by entry size and by total size', () => {
  const cache = createMemoCache({ maxEntries: 10, maxEntryChars: 5 });
  for (let i = 0; i < 10; i++) cache.set(`k${i}`, { text: `v${i}` }, 1000);
  cache.get('k0');
  cache.set('k10', { text: 'v10' }, 1000);
  expect(cache.size()).toBe(9);
  expect(['k0', 'k1', 'k2', 'k3', 'k10'].map((k) => cache.get(k)?.text)).toEqual(['v0', undefined, undefined, 'v3', 'v10']);
  cache.set('big', { text: 'toolong' }, 1000);
  expect(cache.get('big')).toBeUndefined();
  const small = createMemoCache({ maxTotalChars: 8 });
  small.set('x', { text: 'xxxxx' }, 1000);
  small.set('y', { text: 'yyyyy' }, 1000);
  expect([small.get('x'), small.get('y')?.text]).toEqual([undefined, 'yyyyy']);
});

test('a write evicts every entry of its resource, and a read that overlapped it is not cached', () => {
  const cache = createMemoCache();
  cache.set('r1', { text: '1' }, 1000, { resource: 'file:/a' });
  cache.set('r2', { text: '2' }, 1000, { resource: 'file:/a' });
  cache.set('r3', { text: '3' }, 1000, { resource: 'file:/b' });
  expect(cache.evictResource('file:/a')).toBe(2);
  expect([cache.get('r1'), cache.get('r2'), cache.get('r3')?.text]).toEqual([undefined, undefined, '3']);
  const before = cache.generation('file:/b');
  cache.evictResource('file:/b');
  cache.set('r4', { text: 'stale' }, 1000, { resource: 'file:/b', generation: before });
  expect(cache.get('r4')).toBeUndefined();
  cache.set('r5', { text: 'fresh' }, 1000, { resource: 'file:/b', generation: cache.generation('file:/b') });
  expect(cache.get('r5')?.text).toBe('fresh');
});

test("EndSession drops the session's entries only, whatever resource they read, and its index empties", () => {
  const cache = createMemoCache();
  const ended = { tenant: 't', sessionId: 's1' };
  cache.set('a', { text: 'a' }, 1000, { session: ended });
  cache.set('b', { text: 'b' }, 1000, { session: ended, resource: 'file:/a' });
  cache.set('c', { text: 'c' }, 1000, { session: { tenant: 't', sessionId: 's2' }, resource: 'file:/a' });
  cache.set('d', { text: 'd' }, 1000, { session: { tenant: 'u', sessionId: 's1' } });
  expect(cache.endSession(ended)).toBe(2);
  expect(['a', 'b', 'c', 'd'].map((k) => cache.get(k)?.text)).toEqual([undefined, undefined, 'c', 'd']);
  expect(cache.evictResource('file:/a')).toBe(1);
  expect(cache.endSession(ended)).toBe(0);
  cache.set('a', { text: 'again' }, 1000, { session: ended });
  expect(cache.endSession(ended)).toBe(1);
  expect(cache.size()).toBe(1);
});
