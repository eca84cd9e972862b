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

test("one tenant's flood of long-key reads pushes out only its own old names: another's read stays cached and mapped", () => {
  const cache = createMemoCache({ maxEntries: 10 });
  const hot = hashed('a', 'hot');
  cache.set('a-hot', { text: 'kept' }, 60_000, source(hot, cache.generation(hot)));
  const bFirst = hashed('b', 'b0');
  cache.set('b-first', { text: 'pushed out' }, 60_000, source(bFirst, cache.generation(bFirst)));
  for (let i = 1; i <= 50; i++) cache.generation(hashed('b', `b${i}`));
  expect(cache.get('a-hot')?.text).toBe('kept');
  // B's flood pushed out B's own oldest name, and evicted its read.
  expect(cache.get('b-first')).toBeUndefined();
  // A's old name still maps: an old replica's write of it drops A's read.
  expect(cache.evictResource('hot')).toBe(1);
  expect(cache.get('a-hot')).toBeUndefined();
});

test('an old name heard that no read here noted marks nothing; one pushed out while its read runs leaves that read uncached', () => {
  const cache = createMemoCache({ maxEntries: 3 });
  expect(cache.evictResource('never-read')).toBe(0);
  // No mark was made for it (a new replica hears another's duplicate old-format announcement).
  expect(cache.generation('never-read')).toBe(0);
  const first = hashed('t', 'first');
  const running = cache.generation(first);
  for (const hash of ['a', 'b', 'c', 'd']) cache.generation(hashed('t', hash));
  // Pushed out: an old replica's write of it now finds nothing to map, and does nothing...
  expect(cache.evictResource('first')).toBe(0);
  // ...which is safe: the push-out bumped its generation, so the read running across it is not cached.
  cache.set('first', { text: 'read before the write' }, 60_000, source(first, running));
  expect(cache.get('first')).toBeUndefined();
});

test('a read whose own name is pushed out as it is noted (a bound of one) is not cached', () => {
  const cache = createMemoCache({ maxEntries: 1 });
  cache.generation(hashed('t', 'a'));
  const resource = hashed('t', 'b');
  const generation = cache.generation(resource);
  cache.set('b', { text: 'v1' }, 60_000, source(resource, generation));
  // Cached only if its old name still maps: an old replica's write of it must drop it.
  if (cache.get('b') !== undefined) expect(cache.evictResource('b')).toBe(1);
  expect(cache.get('b')).toBeUndefined();
});

test("a read running across a clear may be cached, and an old replica's write of it still drops it", () => {
  const cache = createMemoCache();
  const resource = hashed('t', 'h1');
  const running = cache.generation(resource);
  cache.clear();
  cache.set('running', { text: 'v1' }, 60_000, source(resource, running));
  if (cache.get('running') !== undefined) expect(cache.evictResource('h1')).toBe(1);
  expect(cache.get('running')).toBeUndefined();
});
