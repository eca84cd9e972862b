import { createMemoCache, memoize, type MemoCache } from '../../src/middleware';
import type { Invocation } from '../../src/pipeline';

// The memo cache keeps a resource name for every write (its generation), bounded by count: a
// name must be short whatever the call's resource_key value, or 10,000 writes of a 1 MB path keep
// 10 GB. Long names are hashed; a write still evicts the reads of its own resource only.

/** A real cache that records every resource name it is given. */
function recordingCache(): { cache: MemoCache; names: string[] } {
  const cache = createMemoCache();
  const names: string[] = [];
  return {
    names,
    cache: {
      ...cache,
      generation: (name) => (names.push(name), cache.generation(name)),
      evictResource: (name) => (names.push(name), cache.evictResource(name)),
    },
  };
}

const invocation = (readOnly: boolean, path: string, localKey = `key ${path}`): Invocation =>
  ({
    tool: { readOnly, memoizeTtlSeconds: 60, spec: { resourceKey: '/path' } },
    args: { path },
    ctx: { tenant: 't', sessionId: 's', localKey },
  }) as unknown as Invocation;

test('the names kept for a long resource_key value are short, and a write still evicts its own reads only', async () => {
  const { cache, names } = recordingCache();
  let runs = 0;
  const handler = memoize(cache)(async () => ({ text: `run ${++runs}` }));
  const long = (end: string) => `/${'p'.repeat(1_000_000)}${end}`;
  await handler(invocation(true, long('a')));
  await handler(invocation(true, long('b')));
  expect((await handler(invocation(true, long('a')))).cached).toBe(true);
  await handler(invocation(false, long('a')));
  expect(names.length).toBeGreaterThan(0);
  expect(Math.max(...names.map((name) => name.length))).toBeLessThanOrEqual(256);
  const [readA, readB] = [await handler(invocation(true, long('a'))), await handler(invocation(true, long('b')))];
  expect([readA.cached, readB.cached]).toEqual([undefined, true]);
});

test('a short name is kept as it is; a hash of a long one never equals it', async () => {
  const { cache, names } = recordingCache();
  const handler = memoize(cache)(async () => ({ text: 'ok' }));
  await handler(invocation(false, '/a'));
  await handler(invocation(false, `/${'a'.repeat(300)}`));
  expect(names[0]).toBe('t\u0000"/a"');
  // Hashed after its tenant (the cache bounds names per tenant); '#' starts no JSON.
  expect(names.at(-1)).toMatch(/^t\u0000#[\w-]+$/);
});
