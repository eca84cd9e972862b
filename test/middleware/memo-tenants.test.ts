import { createMemoCache, memoize } from '../../src/middleware';
import type { Invocation, ToolOutput } from '../../src/pipeline';

// Two tenants sharing one memo cache: one's flood of writes, reads or session ends must neither
// make another's stale read cacheable nor push out another's entries within its share.

const doc = (tenant: string, name: string) => `${tenant}\u0000"${name}"`;

test("a read that overlapped its tenant's own write is not cached, though another tenant's writes pushed the resource's generation out", () => {
  const cache = createMemoCache({ maxEntries: 100 });
  const before = cache.generation(doc('A', 'd'));
  cache.evictResource(doc('A', 'd'));
  for (let i = 0; i <= 100; i++) cache.evictResource(doc('B', `r${i}`));
  cache.set('a', { text: 'stale' }, 60_000, { resource: doc('A', 'd'), generation: before });
  expect(cache.get('a')).toBeUndefined();
  // Nor when it is the tenant's own writes that push it out: a generation forgotten reads as the largest its tenant forgot.
  const again = cache.generation(doc('A', 'e'));
  cache.evictResource(doc('A', 'e'));
  for (let i = 0; i <= 100; i++) cache.evictResource(doc('A', `r${i}`));
  cache.set('e', { text: 'stale' }, 60_000, { resource: doc('A', 'e'), generation: again });
  expect(cache.get('e')).toBeUndefined();
  // A read begun after the write is cached.
  cache.set('e', { text: 'fresh' }, 60_000, { resource: doc('A', 'e'), generation: cache.generation(doc('A', 'e')) });
  expect(cache.get('e')?.text).toBe('fresh');
});

test('a read that overlapped a write of a hashed resource name, or a clear, is not cached', () => {
  const cache = createMemoCache({ maxEntries: 10 });
  const before = cache.generation('hashed-a');
  cache.evictResource('hashed-a');
  for (let i = 0; i <= 10; i++) cache.evictResource(`hashed-${i}`);
  cache.set('h', { text: 'stale' }, 60_000, { resource: 'hashed-a', generation: before });
  expect(cache.get('h')).toBeUndefined();
  const overClear = cache.generation(doc('A', 'c'));
  cache.evictResource(doc('A', 'c'));
  cache.clear();
  cache.set('c', { text: 'stale' }, 60_000, { resource: doc('A', 'c'), generation: overClear });
  expect(cache.get('c')).toBeUndefined();
});

/** A read-only or side-effecting call of `tenant` on `resource` through memoize. */
function invocation(tenant: string, readOnly: boolean, resource: string, localKey: string): Invocation {
  const tool = { readOnly, memoizeTtlSeconds: 60, spec: { resourceKey: '/doc' } };
  return { tool, args: { doc: resource }, ctx: { tenant, sessionId: `${tenant}-s`, localKey } } as unknown as Invocation;
}

test("memoize: tenant A's slow read that overlapped its own write is not served after tenant B's 10,001 writes", async () => {
  const cache = createMemoCache();
  const versions = new Map<string, number>();
  let release!: () => void;
  const slow = new Promise<void>((resolve) => (release = resolve));
  const handler = memoize(cache)(async (call): Promise<ToolOutput> => {
    const name = `${call.ctx.tenant}/${(call.args as { doc: string }).doc}`;
    if (!call.tool.readOnly) return { text: `wrote ${versions.set(name, (versions.get(name) ?? 0) + 1).get(name)}` };
    const seen = versions.get(name) ?? 0;
    if (call.ctx.localKey === 'a-first') await slow;
    return { text: `version ${seen}` };
  });
  const first = handler(invocation('A', true, 'd', 'a-first'));
  await handler(invocation('A', false, 'd', 'a-put'));
  for (let i = 0; i < 10_001; i++) await handler(invocation('B', false, `r${i}`, `b${i}`));
  release();
  expect((await first).text).toBe('version 0');
  // The same read again: the cache has nothing from before the write.
  const after = await handler(invocation('A', true, 'd', 'a-first'));
  expect(after).toEqual({ text: 'version 1' });
});

test("one tenant's 10,240 distinct reads do not push out another tenant's entries within its share", () => {
  const cache = createMemoCache();
  const a = { tenant: 'A', sessionId: 's' };
  for (let i = 0; i < 10; i++) cache.set(`a${i}`, { text: `a${i}` }, 60_000, { session: a, sessionEnds: cache.sessionEnds() });
  const b = { tenant: 'B', sessionId: 's' };
  for (let i = 0; i < 10_240; i++) cache.set(`b${i}`, { text: `b${i}` }, 60_000, { session: b, sessionEnds: cache.sessionEnds() });
  expect(cache.size()).toBeLessThanOrEqual(10_000);
  expect(Array.from({ length: 10 }, (_, i) => cache.get(`a${i}`)?.text)).toEqual(Array.from({ length: 10 }, (_, i) => `a${i}`));
  // B's own oldest went, its newest stayed.
  expect([cache.get('b0'), cache.get('b10239')?.text]).toEqual([undefined, 'b10239']);
});

test("one tenant's characters do not push out another tenant's entries within its share", () => {
  const cache = createMemoCache({ maxTotalChars: 1000 });
  cache.set('a', { text: 'a'.repeat(100) }, 60_000, { session: { tenant: 'A', sessionId: 's' } });
  for (let i = 0; i < 20; i++) cache.set(`b${i}`, { text: 'b'.repeat(100) }, 60_000, { session: { tenant: 'B', sessionId: 's' } });
  expect(cache.get('a')?.text).toHaveLength(100);
  expect(cache.get('b19')?.text).toHaveLength(100);
});

test("one tenant's 10,001 session ends neither make another tenant's entries misses nor its running reads uncached", () => {
  const cache = createMemoCache();
  const a = { tenant: 'A', sessionId: 's' };
  cache.set('idle', { text: 'idle' }, 60_000, { session: a, sessionEnds: cache.sessionEnds() });
  const running = cache.sessionEnds();
  for (let i = 0; i <= 10_000; i++) cache.endSession({ tenant: 'B', sessionId: `unused-${i}` });
  expect(cache.get('idle')?.text).toBe('idle');
  cache.set('running', { text: 'ran' }, 60_000, { session: a, sessionEnds: running });
  expect(cache.get('running')?.text).toBe('ran');
  // B's own forgotten ends still count: its entry checked before them is a miss, never a stale hit.
  const b = { tenant: 'B', sessionId: 'unused-0' };
  cache.set('b-running', { text: 'stale' }, 60_000, { session: b, sessionEnds: running });
  expect(cache.get('b-running')).toBeUndefined();
  // A's own ended session is still told apart.
  cache.endSession(a);
  expect(cache.get('idle')).toBeUndefined();
});
