import { createMemoCache, memoize, type MemoCache } from '../../src/middleware';
import { memoStillServes, type Invocation, type ToolOutput } from '../../src/pipeline';
import { peekMemo } from '../../src/pipeline/memo-hit';

// The memo cache's marks (resource writes, session ends) are kept per tenant: another tenant's
// writes, session ends or sheer number must not make a tenant's running reads uncached or its
// peeked hits take their rate turn (a miss, extra work), and never serve anything stale.

/** A call of `tenant` through memoize; `doc` is its resource_key value. */
function invocation(tenant: string, readOnly: boolean, doc: string, localKey: string, sessionId = `${tenant}-s`): Invocation {
  const tool = { readOnly, memoizeTtlSeconds: 60, spec: { resourceKey: '/doc' } };
  return { tool, args: { doc }, ctx: { tenant, sessionId, localKey } } as unknown as Invocation;
}

/** Memoize over a handler whose reads answer the version of their document (per tenant), one of them held until released. */
function documents(cache: MemoCache, slowKey: string) {
  const versions = new Map<string, number>();
  let release!: () => void;
  const slow = new Promise<void>((resolve) => (release = resolve));
  let runs = 0;
  const handler = memoize(cache)(async (call): Promise<ToolOutput> => {
    runs++;
    const name = `${call.ctx.tenant}/${(call.args as { doc: string }).doc}`;
    if (!call.tool.readOnly) return { text: `wrote ${versions.set(name, (versions.get(name) ?? 0) + 1).get(name)}` };
    const seen = versions.get(name) ?? 0;
    if (call.ctx.localKey === slowKey) await slow;
    return { text: `version ${seen}` };
  });
  return { handler, release, runs: () => runs };
}

const long = (name: string) => `${name}${'x'.repeat(300)}`;

test("another tenant's writes of long resource_key values neither uncache a tenant's running read of a long one nor retake its peeked hit", async () => {
  const cache = createMemoCache({ maxEntries: 100 });
  const { handler, release, runs } = documents(cache, 'a-slow');
  await handler(invocation('A', true, long('d'), 'a-idle'));
  const peeked = peekMemo(cache, 'a-idle')!;
  const running = handler(invocation('A', true, long('e'), 'a-slow'));
  for (let i = 0; i <= 100; i++) await handler(invocation('B', false, long(`r${i}`), `b${i}`));
  release();
  expect((await running).text).toBe('version 0');
  // Cached: the same read again is a hit, without running.
  const before = runs();
  expect(await handler(invocation('A', true, long('e'), 'a-slow'))).toMatchObject({ text: 'version 0', cached: true });
  expect(runs()).toBe(before);
  expect(memoStillServes(cache, peeked)).toBe(true);
  // A's own write of a long name still counts.
  await handler(invocation('A', false, long('d'), 'a-put'));
  expect(memoStillServes(cache, peeked)).toBe(false);
  expect(await handler(invocation('A', true, long('d'), 'a-idle'))).toEqual({ text: 'version 1' });
});

test("a tenant's read that overlapped its own write of a long resource_key value is not cached, whoever wrote since", async () => {
  const cache = createMemoCache({ maxEntries: 100 });
  const { handler, release } = documents(cache, 'a-slow');
  const running = handler(invocation('A', true, long('d'), 'a-slow'));
  await handler(invocation('A', false, long('d'), 'a-put'));
  for (let i = 0; i <= 100; i++) await handler(invocation('B', false, long(`r${i}`), `b${i}`));
  for (let i = 0; i <= 100; i++) await handler(invocation('A', false, long(`r${i}`), `a${i}`));
  release();
  expect((await running).text).toBe('version 0');
  expect(await handler(invocation('A', true, long('d'), 'a-slow'))).toEqual({ text: 'version 1' });
});

test("another tenant's session end does not retake a tenant's peeked hit; its own sessions' ends do", () => {
  const cache = createMemoCache();
  const a = { tenant: 'A', sessionId: 's' };
  cache.set('a', { text: 'a' }, 60_000, { session: a, sessionEnds: cache.sessionEnds() });
  const peeked = peekMemo(cache, 'a')!;
  cache.endSession({ tenant: 'B', sessionId: 's' });
  expect(memoStillServes(cache, peeked)).toBe(true);
  cache.endSession({ tenant: 'A', sessionId: 'other' });
  expect(memoStillServes(cache, peeked)).toBe(false);
});

test("past maxEntries tenants, other tenants' writes and session ends neither uncache an active tenant's running read nor make its entries misses", async () => {
  const cache = createMemoCache({ maxEntries: 100 });
  const { handler, release } = documents(cache, 'a-slow');
  // 95 tenants wrote and ended a session before A began reading.
  const churn = async (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      await handler(invocation(`T${i}`, false, 'd', `t${i}`));
      cache.endSession({ tenant: `T${i}`, sessionId: 's' });
    }
  };
  await churn(0, 95);
  await handler(invocation('A', true, 'idle', 'a-idle'));
  const peeked = peekMemo(cache, 'a-idle')!;
  const running = handler(invocation('A', true, 'd', 'a-slow'));
  // 50 more: the least recently active tenants' marks go whole, A's stay.
  await churn(95, 145);
  release();
  expect((await running).text).toBe('version 0');
  expect(await handler(invocation('A', true, 'd', 'a-slow'))).toMatchObject({ text: 'version 0', cached: true });
  expect(memoStillServes(cache, peeked)).toBe(true);
  expect(await handler(invocation('A', true, 'idle', 'a-idle'))).toMatchObject({ cached: true });
});

test('a read of a tenant whose marks were dropped whole is not cached if its resource was written or its session ended meanwhile', () => {
  const cache = createMemoCache({ maxEntries: 100 });
  const x = { tenant: 'X', sessionId: 's' };
  const resource = 'X\u0000"d"';
  cache.reading('X');
  const [generation, sessionEnds] = [cache.generation(resource), cache.sessionEnds()];
  cache.evictResource(resource);
  cache.endSession(x);
  // 100 tenants since: X is the least recently active, and goes whole.
  for (let i = 0; i < 100; i++) {
    cache.evictResource(`T${i}\u0000"d"`);
    cache.endSession({ tenant: `T${i}`, sessionId: 's' });
  }
  cache.set('written', { text: 'stale' }, 60_000, { resource, generation });
  cache.set('ended', { text: 'stale' }, 60_000, { session: x, sessionEnds });
  expect([cache.get('written'), cache.get('ended')]).toEqual([undefined, undefined]);
  // Begun now, after: cached.
  cache.set('fresh', { text: 'fresh' }, 60_000, { resource, generation: cache.generation(resource), session: x, sessionEnds: cache.sessionEnds() });
  expect(cache.get('fresh')?.text).toBe('fresh');
});
