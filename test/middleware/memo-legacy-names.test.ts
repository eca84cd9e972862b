import { createMemoCache } from '../../src/middleware';

// A replica older than 01b27b4 announces a write of a long resource by its hash alone; this one
// names it tenant, NUL, '#', hash. The cache maps a heard old name to the resource a read of this
// replica noted, within a bound, and never leaves a read stale past it.

const hashed = (tenant: string, hash: string) => `${tenant}\u0000#${hash}`;
const source = (resource: string, generation: number) => ({ resource, generation, session: { tenant: 't', sessionId: 's' }, sessionEnds: 0 });

test('an old name heard drops the entries of its resource, and a read running then is not cached', () => {
  const cache = createMemoCache();
  const resource = hashed('t', 'h1');
  cache.set('cached', { text: 'before' }, 60_000, source(resource, cache.generation(resource)));
  const running = cache.generation(resource);
  expect(cache.evictResource('h1')).toBe(1);
  expect(cache.get('cached')).toBeUndefined();
  cache.set('running', { text: 'read before the write' }, 60_000, source(resource, running));
  expect(cache.get('running')).toBeUndefined();
  // Another tenant's resource of another hash is untouched.
  const other = hashed('u', 'h2');
  cache.set('other', { text: 'kept' }, 60_000, source(other, cache.generation(other)));
  cache.evictResource('h1');
  expect(cache.get('other')?.text).toBe('kept');
});

test('past the bound, a resource whose old name is forgotten is dropped here: a miss, never a stale read', () => {
  const cache = createMemoCache({ maxEntries: 3 });
  const first = hashed('t', 'first');
  cache.set('first', { text: 'v1' }, 60_000, source(first, cache.generation(first)));
  const running = cache.generation(first);
  for (const hash of ['a', 'b', 'c']) cache.generation(hashed('t', hash));
  // 'first' no longer maps (an old replica's write of it would find nothing), so nothing of it is left.
  expect(cache.get('first')).toBeUndefined();
  cache.set('first', { text: 'read before' }, 60_000, source(first, running));
  expect(cache.get('first')).toBeUndefined();
});
