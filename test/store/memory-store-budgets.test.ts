import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { createMemoryStore } from '../../src/store';
import { ensureDist } from '../security/support/child-server';

// The memory store kept ~1.5 KB of heap per successful call for a day with no store-wide bound
// (memory entries capped per session only, loop windows too): a replica with the Helm chart's heap
// (~259 MiB) died after ~150,000 calls, losing every idempotency record. maxMemoryChars and
// maxWindowEntries now bound them across sessions.

const scopeOf = (tenant: string, sessionId: string) => ({ tenant, sessionId });
const text = (n: number, seed: string) => seed.padEnd(n, '.');

test('maxMemoryChars: past it the oldest entries go, whichever session holds them, until a tenth below', async () => {
  const store = createMemoryStore({ maxMemoryChars: 1000 });
  const a = scopeOf('t', 'a');
  const b = scopeOf('t', 'b');
  const write = (scope: typeof a, entry: string) => store.finishAttempt({ scope, op: 'op', memory: { entry, max: 200, ttlSeconds: 60 } });
  for (let i = 1; i <= 6; i++) await write(a, text(100, `a${i}`));
  for (let i = 1; i <= 5; i++) await write(b, text(100, `b${i}`));
  // 1,100 characters: a1 and a2 go (900 left).
  expect((await store.memory(a)).map((e) => e.slice(0, 2))).toEqual(['a3', 'a4', 'a5', 'a6']);
  expect(await store.memory(b)).toHaveLength(5);
  // One entry larger than the whole budget is kept, alone.
  await write(b, text(1500, 'big'));
  expect(await store.memory(a)).toEqual([]);
  expect((await store.memory(b)).map((e) => e.slice(0, 3))).toEqual(['big']);
  await store.close();
});

test('maxMemoryChars: entries dropped by the per-session cap or the session end leave the count', async () => {
  const store = createMemoryStore({ maxMemoryChars: 1000 });
  const a = scopeOf('t', 'a');
  for (let i = 0; i < 50; i++) await store.finishAttempt({ scope: a, op: 'op', memory: { entry: text(100, `a${i}`), max: 3, ttlSeconds: 60 } });
  const gone = scopeOf('t', 'gone');
  for (let i = 0; i < 5; i++) await store.finishAttempt({ scope: gone, op: 'op', memory: { entry: text(100, `g${i}`), max: 200, ttlSeconds: 60 } });
  await store.endSession(gone);
  const b = scopeOf('t', 'b');
  for (let i = 0; i < 7; i++) await store.finishAttempt({ scope: b, op: 'op', memory: { entry: text(100, `b${i}`), max: 200, ttlSeconds: 60 } });
  // 3 of a's and 7 of b's: exactly the budget, nothing evicted.
  expect(await store.memory(a)).toHaveLength(3);
  expect(await store.memory(b)).toHaveLength(7);
  await store.close();
});

const record = (store: ReturnType<typeof createMemoryStore>, scope: { tenant: string; sessionId: string }, times: number) => {
  for (let i = 0; i < times; i++) void store.finishAttempt({ scope, op: 'op', record: { result: 'same', failed: false, window: 100 } });
};
const streak = async (store: ReturnType<typeof createMemoryStore>, scope: { tenant: string; sessionId: string }) => (await store.beginAttempt({ scope, op: 'op' })).streak.count;

test('maxWindowEntries: whole windows of sessions idle past their hold restart first, least recently recorded first', async () => {
  let t = 0;
  const store = createMemoryStore({ maxWindowEntries: 10, sessionHoldSeconds: 60, now: () => t });
  record(store, scopeOf('a', 'idle-1'), 3);
  record(store, scopeOf('a', 'idle-2'), 3);
  t = 100_000;
  record(store, scopeOf('a', 'busy'), 3);
  record(store, scopeOf('b', 'new'), 2); // 11 entries: idle-1's window goes (8 left)
  expect(await streak(store, scopeOf('a', 'idle-1'))).toBe(0);
  expect(await streak(store, scopeOf('a', 'idle-2'))).toBe(3);
  expect(await streak(store, scopeOf('a', 'busy'))).toBe(3);
  expect(await streak(store, scopeOf('b', 'new'))).toBe(2);
  await store.close();
});

test('maxWindowEntries: with every session in use, another tenant\'s traffic restarts only windows of a tenant over an equal share', async () => {
  const store = createMemoryStore({ maxWindowEntries: 10, now: () => 0 });
  record(store, scopeOf('b', 'small'), 1); // least recently recorded, but its tenant holds little
  for (const id of ['a1', 'a2', 'a3']) record(store, scopeOf('a', id), 3);
  record(store, scopeOf('a', 'a4'), 2); // 12 entries: a holds 11, over its share of 9: a1 goes
  expect(await streak(store, scopeOf('b', 'small'))).toBe(1);
  expect(await streak(store, scopeOf('a', 'a1'))).toBe(0);
  expect(await streak(store, scopeOf('a', 'a2'))).toBe(3);
  expect(await streak(store, scopeOf('a', 'a4'))).toBe(2);
  await store.close();
});

test('maxWindowEntries: after the wall clock steps back, the window of a session idle before the step restarts first, not one in use', async () => {
  let t = 0;
  const store = createMemoryStore({ maxWindowEntries: 10, sessionHoldSeconds: 60, now: () => t });
  record(store, scopeOf('b', 'idle'), 3); // its hold ends at 60 s
  t = 100_000;
  record(store, scopeOf('a', 'a1'), 3);
  t = 50_000; // stepped back 50 s: on the wall clock, b's session looks held again
  record(store, scopeOf('a', 'a2'), 3);
  record(store, scopeOf('a', 'a3'), 2); // 11 entries
  // Before, idleness was read on the wall clock: b's window stayed, and a, over its equal share, lost a1's.
  expect(await streak(store, scopeOf('b', 'idle'))).toBe(0);
  expect(await streak(store, scopeOf('a', 'a1'))).toBe(3);
  expect(await streak(store, scopeOf('a', 'a2'))).toBe(3);
  expect(await streak(store, scopeOf('a', 'a3'))).toBe(2);
  await store.close();
});

test('maxWindowEntries: a session evicted for room no longer counts, so no window of a session in use restarts in its place', async () => {
  const store = createMemoryStore({ maxSessions: 3, maxWindowEntries: 10, sessionHoldSeconds: 60, now: () => 0 });
  record(store, scopeOf('a', 'big'), 8);
  record(store, scopeOf('b', 's1'), 1);
  record(store, scopeOf('b', 's2'), 1);
  // A 4th session: b, over its equal share of sessions, loses s1 (all are held). 10 entries with s3's.
  record(store, scopeOf('b', 's3'), 1);
  // Before, s1's window was still counted (11 entries): a, over its equal share of entries, had
  // big's window restarted, a session in use, while the evicted s1's stayed counted.
  expect(await streak(store, scopeOf('a', 'big'))).toBe(8);
  expect(await streak(store, scopeOf('b', 's3'))).toBe(1);
  expect(await streak(store, scopeOf('b', 's1'))).toBe(0);
  await store.close();
});

// The reviewer's fill: each call writes its loop-window record and its memory entry (a 2,000-char
// argument, a 3,000-char output: ~1,031 characters), 200 per session. Run at half the Helm chart's
// heap with half the reviewer's calls (the store-wide budgets scale with the heap): without the
// store-wide bounds 100,000 calls at ~1.5 KB each run a 128 MiB heap out (checked: it aborts).
const FILL = `
const { createMemoryStore } = require(${JSON.stringify(join(__dirname, '../../dist/src/store'))});
const { memoryEntry } = require(${JSON.stringify(join(__dirname, '../../dist/src/pipeline/memory-entry'))});
const { resolveMemoryStoreOptions } = require(${JSON.stringify(join(__dirname, '../../dist/src/store/memory-store-options'))});
const store = createMemoryStore();
const ascii = (n, seed) => (seed + 'abcdefghij'.repeat(Math.ceil(n / 10))).slice(0, n);
(async () => {
  let chars = 0;
  for (let s = 0; s < 500; s++) {
    const scope = { tenant: 't', sessionId: 'session-' + s };
    for (let i = 0; i < 200; i++) {
      const args = '{"path":"/data/file-' + i + '.txt","q":"' + ascii(1960, s + ':' + i) + '"}';
      const output = ascii(3000, 'out ' + s + ':' + i + ' ');
      store.finishAttempt({ scope, op: 'read_file\\u0000"/data/file-' + i + '.txt"', record: { result: output, failed: false, window: 100 }, memory: { entry: memoryEntry('read_file', args, output), max: 200, ttlSeconds: 86400 } });
    }
  }
  for (let s = 0; s < 500; s++) for (const e of await store.memory({ tenant: 't', sessionId: 'session-' + s })) chars += e.length;
  gc();
  console.log(JSON.stringify({ heapUsed: process.memoryUsage().heapUsed, chars, budget: resolveMemoryStoreOptions({}).maxMemoryChars }));
})();
`;

test('100,000 successful calls into the default memory store under a 128 MiB heap: the process stays up, within the budgets', () => {
  ensureDist();
  const out = execFileSync(process.execPath, ['--max-old-space-size=128', '--max-semi-space-size=1', '--expose-gc', '-e', FILL], { encoding: 'utf8', timeout: 60_000 });
  const { heapUsed, chars, budget } = JSON.parse(out) as { heapUsed: number; chars: number; budget: number };
  // The default 16 Mi characters, scaled to this heap (memory-store-heap.test.ts).
  expect(budget).toBeLessThan(16 * 1024 * 1024);
  expect(chars).toBeLessThanOrEqual(budget);
  expect(chars).toBeGreaterThan(budget / 2);
  // 160 MiB of the 256 MiB heap, scaled as the heap is.
  expect(heapUsed).toBeLessThan(80 * 1024 * 1024);
}, 70_000);

test('maxWindowEntries: a pass always ends a tenth below the bound, so that the next is as far off (the cost per record stays flat)', async () => {
  const store = createMemoryStore({ maxWindowEntries: 10, now: () => 0 });
  for (const id of ['a1', 'a2', 'a3']) record(store, scopeOf('a', id), 1);
  record(store, scopeOf('b', 'b1'), 8); // 11: b1 (just recorded) stays, so the least recent others go down to 9
  expect(await streak(store, scopeOf('a', 'a1'))).toBe(0);
  expect(await streak(store, scopeOf('a', 'a2'))).toBe(0);
  expect(await streak(store, scopeOf('a', 'a3'))).toBe(1);
  expect(await streak(store, scopeOf('b', 'b1'))).toBe(8);
  await store.close();
});
