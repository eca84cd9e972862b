import { createMemoCache } from '../../src/middleware';

// Within a tenant the old names are kept least recently used first: a hashed resource read or
// written again becomes its tenant's newest, so the tenant's own flood of distinct long keys pushes
// out its cold names before its hot one. Before, the first noted went first, whatever was used
// since. A bound of 10 cuts to 9 when an 11th name is held: the two least recently used go. Only a
// few reads are cached (the entries have the same bound); the others only read their generation.

const hashed = (tenant: string, hash: string) => `${tenant}\u0000#${hash}`;
const source = (resource: string, generation: number) => ({ resource, generation, session: { tenant: 't', sessionId: 's' }, sessionEnds: 0 });

/** A read of `hash` in tenant t, cached under `key`. */
function read(cache: ReturnType<typeof createMemoCache>, key: string, hash: string): void {
  const resource = hashed('t', hash);
  cache.set(key, { text: key }, 60_000, source(resource, cache.generation(resource)));
}

/** Reads of `hashes` in tenant t, not cached (a flood of distinct long keys). */
function flood(cache: ReturnType<typeof createMemoCache>, ...hashes: string[]): void {
  for (const hash of hashes) cache.generation(hashed('t', hash));
}

test("a hot resource read again outlives its own tenant's flood: its read stays cached and an old replica's write of it still drops it", () => {
  const cache = createMemoCache({ maxEntries: 10 });
  read(cache, 'hot-1', 'hot');
  for (let i = 1; i <= 3; i++) read(cache, `k${i}`, `k${i}`);
  flood(cache, 'k4', 'k5');
  // Another call reads the hot resource: it moves to the newest of tenant t.
  read(cache, 'hot-2', 'hot');
  flood(cache, 'k6', 'k7', 'k8', 'k9', 'k10');
  // The 11th name cut the two least recently used, k1 and k2, not the hot one.
  expect(cache.get('hot-2')?.text).toBe('hot-2');
  expect(cache.get('k1')).toBeUndefined();
  expect(cache.get('k2')).toBeUndefined();
  expect(cache.get('k3')?.text).toBe('k3');
  // Still mapped: an older replica's write of it (its hash alone) drops both reads.
  expect(cache.evictResource('hot')).toBe(2);
  expect(cache.get('hot-1')).toBeUndefined();
  expect(cache.get('hot-2')).toBeUndefined();
});

test.each([
  ['by its old name (an older replica)', 'hot'],
  ['by its new name (a replica of this version)', hashed('t', 'hot')],
])('a write heard of a held resource %s moves it to the newest of its tenant', (_who, written) => {
  const cache = createMemoCache({ maxEntries: 10 });
  read(cache, 'hot-1', 'hot');
  for (let i = 1; i <= 3; i++) read(cache, `k${i}`, `k${i}`);
  flood(cache, 'k4', 'k5');
  expect(cache.evictResource(written)).toBe(1);
  flood(cache, 'k6', 'k7', 'k8', 'k9', 'k10');
  // k1 and k2 went, the hot resource stayed (before, it went with k1, and k2 stayed).
  expect(cache.get('k1')).toBeUndefined();
  expect(cache.get('k2')).toBeUndefined();
  expect(cache.get('k3')?.text).toBe('k3');
});
