import { createMemoCache, memoize } from '../../src/middleware';
import { memoStillServes, type Invocation, type MemoHit } from '../../src/pipeline';
import { peekMemo } from '../../src/pipeline/memo-hit';

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

test("EndSession makes the session's entries unreachable, whatever resource they read; other sessions' stay", () => {
  const cache = createMemoCache();
  const ended = { tenant: 't', sessionId: 's1' };
  cache.set('a', { text: 'a' }, 1000, { session: ended });
  cache.set('b', { text: 'b' }, 1000, { session: ended, resource: 'file:/a' });
  cache.set('c', { text: 'c' }, 1000, { session: { tenant: 't', sessionId: 's2' }, resource: 'file:/a' });
  cache.set('d', { text: 'd' }, 1000, { session: { tenant: 'u', sessionId: 's1' } });
  cache.set('e', { text: 'e' }, 1000);
  cache.endSession(ended);
  expect(['a', 'b', 'c', 'd', 'e'].map((k) => cache.get(k)?.text)).toEqual([undefined, undefined, 'c', 'd', 'e']);
  expect(cache.size()).toBe(3);
  expect(cache.evictResource('file:/a')).toBe(1);
  // The session goes on after its end: what it reads next is cached again.
  cache.set('a', { text: 'again' }, 1000, { session: ended, sessionEnds: cache.sessionEnds() });
  expect(cache.get('a')?.text).toBe('again');
});

test('a read running when its session ends is not cached; one begun after the end is', () => {
  const cache = createMemoCache();
  const scope = { tenant: 't', sessionId: 's' };
  const other = { tenant: 't', sessionId: 'other' };
  const before = cache.sessionEnds();
  cache.endSession(scope);
  cache.set('running', { text: 'stale' }, 1000, { session: scope, sessionEnds: before });
  cache.set('other', { text: 'kept' }, 1000, { session: other, sessionEnds: before });
  cache.set('after', { text: 'fresh' }, 1000, { session: scope, sessionEnds: cache.sessionEnds() });
  expect(['running', 'other', 'after'].map((k) => cache.get(k)?.text)).toEqual([undefined, 'kept', 'fresh']);
});

test('forgetAll (announcements missed) drops every entry, and no read running across it is cached; reads begun after it are', () => {
  const cache = createMemoCache();
  const scope = { tenant: 't', sessionId: 's' };
  cache.set('kept?', { text: 'old' }, 1000, { resource: 'file:/a', session: scope });
  cache.set('plain', { text: 'old' }, 1000);
  // Reads begun before: the last mark made is the one each read (a write just before them).
  cache.evictResource('file:/a');
  cache.endSession({ tenant: 't', sessionId: 'ended' });
  const generation = cache.generation('file:/a');
  const sessionEnds = cache.sessionEnds('t');
  const allEnds = cache.sessionEnds();
  cache.forgetAll();
  expect([cache.get('kept?'), cache.get('plain'), cache.size()]).toEqual([undefined, undefined, 0]);
  cache.set('by resource', { text: 'stale' }, 1000, { resource: 'file:/a', generation });
  cache.set('by tenant', { text: 'stale' }, 1000, { session: scope, sessionEnds });
  cache.set('by count', { text: 'stale' }, 1000, { session: scope, sessionEnds: allEnds });
  expect(cache.size()).toBe(0);
  cache.set('after', { text: 'fresh' }, 1000, { resource: 'file:/a', generation: cache.generation('file:/a'), session: scope, sessionEnds: cache.sessionEnds('t') });
  expect(cache.get('after')?.text).toBe('fresh');
});

test('ended sessions are remembered up to maxEntries; past it, an entry not checked since the latest end forgotten is a miss, never a stale hit', () => {
  const cache = createMemoCache({ maxEntries: 3 });
  const scope = (i: number) => ({ tenant: 't', sessionId: `s${i}` });
  cache.set('ended', { text: 'stale' }, 1000, { session: scope(0) });
  cache.set('idle', { text: 'idle' }, 1000, { session: scope(9) });
  cache.set('read', { text: 'read' }, 1000, { session: scope(9) });
  cache.endSession(scope(0));
  cache.endSession(scope(1));
  // Read after s0's and s1's ends: checked then, so they no longer matter to it.
  expect(cache.get('read')?.text).toBe('read');
  for (let i = 2; i <= 3; i++) cache.endSession(scope(i));
  cache.set('new', { text: 'new' }, 1000, { session: scope(9) });
  // s0's and s1's ends are forgotten now (four ends, three remembered: a pass keeps nine tenths, two).
  expect(['ended', 'idle', 'read', 'new'].map((k) => cache.get(k)?.text)).toEqual([undefined, undefined, 'read', 'new']);
  cache.set('running', { text: 'x' }, 1000, { session: scope(9), sessionEnds: 0 });
  expect(cache.get('running')).toBeUndefined();
});

test("room is made from an ended session's entries first, when a session ended since the last look for them", () => {
  const cache = createMemoCache({ maxEntries: 10 });
  const live = { tenant: 't', sessionId: 'live' };
  const ended = { tenant: 't', sessionId: 'ended' };
  const add = (key: string, session: typeof live) => cache.set(key, { text: key }, 60_000, { session, sessionEnds: cache.sessionEnds('t') });
  // A first pass, no session ended yet: the two oldest go (down to nine).
  for (let i = 0; i <= 10; i++) add(`l${i}`, live);
  expect([cache.get('l0'), cache.get('l1'), cache.size()]).toEqual([undefined, undefined, 9]);
  add('x', ended);
  cache.endSession(ended);
  // The next pass looks for ended sessions' entries: 'x' goes first, then only the oldest live one.
  add('l11', live);
  expect(cache.size()).toBe(9);
  expect([cache.get('l2'), cache.get('l3')?.text, cache.get('l11')?.text]).toEqual([undefined, 'l3', 'l11']);
});

test('peek answers as get does without making the entry the most recently used', () => {
  let t = 0;
  const cache = createMemoCache({ maxEntries: 10, now: () => t });
  for (let i = 0; i < 10; i++) cache.set(`k${i}`, { text: `v${i}` }, 1000);
  expect(cache.peek('k0')?.text).toBe('v0');
  expect(cache.peek('nothing')).toBeUndefined();
  cache.set('k10', { text: 'v10' }, 1000);
  expect([cache.peek('k0'), cache.peek('k3')?.text]).toEqual([undefined, 'v3']);
  t = 1000;
  expect(cache.peek('k3')).toBeUndefined();
  const ended = { tenant: 't', sessionId: 's' };
  cache.set('e', { text: 'e' }, 1000, { session: ended });
  cache.endSession(ended);
  expect(cache.peek('e')).toBeUndefined();
});

test('memoize serves the output peeked for an attempt that skipped its rate turn, even if the entry has gone', async () => {
  let runs = 0;
  const handler = memoize(createMemoCache())(async () => ({ text: `run ${++runs}` }));
  const memoized: MemoHit = { output: { text: 'peeked' }, generation: 0, sessionEnds: 0 };
  const invocation = { tool: { readOnly: true, memoizeTtlSeconds: 60, spec: { resourceKey: '' } }, args: {}, ctx: { tenant: 't', sessionId: 's', localKey: 'k' }, memoized } as unknown as Invocation;
  expect(await handler(invocation)).toEqual({ text: 'peeked', warnings: undefined, cached: true });
  expect(runs).toBe(0);
});

test('memoize does not serve a peeked output once its resource was written or a session ended since the peek; one gone by its TTL still is', async () => {
  let t = 0;
  const cache = createMemoCache({ now: () => t });
  let runs = 0;
  const handler = memoize(cache)(async () => ({ text: `run ${++runs}` }));
  const tool = (readOnly: boolean) => ({ readOnly, memoizeTtlSeconds: 60, spec: { resourceKey: '/path' } });
  const ctx = { tenant: 't', sessionId: 's', localKey: 'k' };
  const read = (memoized?: MemoHit) => handler({ tool: tool(true), args: { path: 'a' }, ctx, memoized } as unknown as Invocation);
  const write = () => handler({ tool: tool(false), args: { path: 'a' }, ctx: { ...ctx, localKey: 'w' } } as unknown as Invocation);
  expect(await read()).toEqual({ text: 'run 1' });
  // Peeked (the attempt skips its turn), then the resource is written before memoize runs.
  let peeked = peekMemo(cache, 'k')!;
  expect(peeked).toMatchObject({ output: { text: 'run 1' }, resource: 't\u0000"a"', generation: 0, sessionEnds: 0 });
  await write();
  expect(await read(peeked)).toEqual({ text: 'run 3' });
  // Peeked, then another session ends: the entry is still there, and served.
  peeked = peekMemo(cache, 'k')!;
  cache.endSession({ tenant: 't', sessionId: 'other' });
  expect(memoStillServes(cache, peeked)).toBe(false);
  expect(await read(peeked)).toEqual({ text: 'run 3', warnings: undefined, cached: true });
  // Peeked, then its own session ends.
  peeked = peekMemo(cache, 'k')!;
  cache.endSession({ tenant: 't', sessionId: 's' });
  expect(await read(peeked)).toEqual({ text: 'run 4' });
  // Peeked, then the entry expires: nothing it read changed, so the peeked output is served.
  peeked = peekMemo(cache, 'k')!;
  t = 60_000;
  expect(await read(peeked)).toEqual({ text: 'run 4', warnings: undefined, cached: true });
  expect(runs).toBe(4);
});
