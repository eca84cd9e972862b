import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { createMemoryStore } from '../../src/store';
import { HEAP_SHARE, heapScale, resolveMemoryStoreOptions } from '../../src/store/memory-store-options';
import type { Logger } from '../../src/log';
import { ensureDist } from '../security/support/child-server';

// The memory store's four store-wide budgets took up to ~270 MiB of heap at their defaults, on a
// 512Mi pod whose whole heap the Helm chart sets to ~380 MiB: the store alone could run it out of
// heap, losing every record. Budgets left unset now shrink with the heap.

const MiB = 1024 * 1024;
/** Heap bytes the four budgets may take, by the store's own estimate per unit. */
const heapBytes = (b: ReturnType<typeof resolveMemoryStoreOptions>) => b.maxRecordChars * 2 + b.maxSpilledChars * 2 + b.maxMemoryChars * 2 + b.maxWindowEntries * 600;

test('on a large heap the defaults stand', () => {
  const bounds = resolveMemoryStoreOptions({ heapLimitBytes: 4096 * MiB });
  expect(bounds).toMatchObject({ maxRecordChars: 64 * MiB, maxSpilledChars: 32 * MiB, maxMemoryChars: 16 * MiB, maxWindowEntries: 100_000, heapScale: 1 });
});

test("on the Helm chart's 512Mi pod the four store-wide budgets together take at most their share of the heap", () => {
  const heap = 380 * MiB;
  const bounds = resolveMemoryStoreOptions({ heapLimitBytes: heap });
  expect(bounds.heapScale).toBeCloseTo(heapScale(heap));
  expect(bounds.heapScale).toBeLessThan(0.6);
  expect(heapBytes(bounds)).toBeLessThanOrEqual(HEAP_SHARE * heap);
  expect(heapBytes(bounds)).toBeGreaterThan(0.95 * HEAP_SHARE * heap);
  // In proportion: each budget shrinks alike.
  expect(bounds.maxRecordChars / bounds.maxSpilledChars).toBeCloseTo(2);
  expect(bounds.maxWindowEntries).toBe(Math.floor(100_000 * bounds.heapScale));
  // Counts that are not heap budgets stay.
  expect(bounds).toMatchObject({ maxSessions: 10_000, maxRecords: 200_000, maxClaims: 131_072, maxResultsPerSession: 1000 });
});

test('a budget set explicitly is used as given, whatever the heap; a tiny heap still leaves every budget positive', () => {
  const bounds = resolveMemoryStoreOptions({ heapLimitBytes: 64 * MiB, maxRecordChars: 100 * MiB });
  expect(bounds.maxRecordChars).toBe(100 * MiB);
  expect(bounds.maxSpilledChars).toBeLessThan(32 * MiB);
  const tiny = resolveMemoryStoreOptions({ heapLimitBytes: 1 });
  for (const name of ['maxRecordChars', 'maxSpilledChars', 'maxMemoryChars', 'maxWindowEntries'] as const) expect(tiny[name]).toBe(1);
});

test('the store logs the scaled budgets once, at creation', async () => {
  const lines: { message: string; fields: unknown }[] = [];
  const logger: Logger = { debug() {}, warn() {}, error() {}, info: (message, fields) => void lines.push({ message, fields }) };
  const store = createMemoryStore({ heapLimitBytes: 380 * MiB, logger });
  expect(lines).toHaveLength(1);
  expect(lines[0]!.message).toMatch(/scaled to this heap/);
  expect(lines[0]!.fields).toMatchObject({ maxRecordChars: expect.any(Number), maxWindowEntries: expect.any(Number) });
  await store.close();
  lines.length = 0;
  await createMemoryStore({ heapLimitBytes: 4096 * MiB, logger }).close();
  expect(lines).toHaveLength(0);
});

test("a process started with the chart's heap flag sizes the store to it", () => {
  ensureDist();
  const dist = join(__dirname, '..', '..', 'dist', 'src', 'store', 'memory-store-options.js');
  const read = (flags: string[]) => JSON.parse(execFileSync(process.execPath, [...flags, '-e', `console.log(JSON.stringify(require(${JSON.stringify(dist)}).resolveMemoryStoreOptions({})))`], { encoding: 'utf8' }));
  const small = read(['--max-old-space-size=332']);
  expect(small.heapScale).toBeLessThan(0.6);
  expect(small.maxRecordChars).toBeLessThan(40 * MiB);
  const large = read(['--max-old-space-size=4096']);
  expect(large.heapScale).toBe(1);
  expect(large.maxRecordChars).toBe(64 * MiB);
});
