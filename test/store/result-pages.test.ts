import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { createMemoryStore, newResultHandle, type SessionScope, type Store } from '../../src/store';
import { connectRedis, createRedisStore, sessionKeys, whenReady } from '../../src/store/redis';
import { CHUNK_POINTS, indexChunks, pageOf } from '../../src/store/spilled-text';
import { startRedis, type TestRedis } from '../helpers/redis-server';

// A spill is kept in chunks of CHUNK_POINTS code points, so that a ReadResult page reads about
// its size: every page, at every offset and across chunk edges, is the text's code points
// [offset, offset + limit), as slicing the whole text would give; with surrogate pairs too.

jest.setTimeout(60_000);

const fresh = (): SessionScope => ({ tenant: 't', sessionId: `s-${randomUUID()}` });

/** About 3.5 chunks, with an emoji every 7 characters and one on each side of the first edges. */
function mixedText(): string {
  const parts: string[] = [];
  for (let i = 0; i < 3.5 * CHUNK_POINTS; i++) parts.push(i % 7 === 3 || i === CHUNK_POINTS - 1 || i === CHUNK_POINTS ? '😀' : String.fromCharCode(97 + (i % 26)));
  return parts.join('');
}

// `whole`: two whole chunks, so a page at or past the end must read no chunk (read-result.lua asked
// for the chunk after the last, and answered 'not found': found in a review).
const TEXTS = { plain: 'x'.repeat(2 * CHUNK_POINTS + 5).replace(/^x{3}/, 'abc'), mixed: mixedText(), short: 'one 🚀 two', whole: '🚀'.repeat(2 * CHUNK_POINTS) };

function offsets(total: number): Array<[number, number]> {
  const edges = [0, 1, CHUNK_POINTS - 1, CHUNK_POINTS, CHUNK_POINTS + 1, 2 * CHUNK_POINTS - 3, total - 1, total, total + 5];
  const limits = [1, 10, CHUNK_POINTS, CHUNK_POINTS + 7, 65_536];
  return edges.filter((o) => o >= 0).flatMap((o) => limits.map((l): [number, number] => [o, l]));
}

test('pageOf agrees with Array.from for any text of a few chunks, lone surrogates included', () => {
  const unit = fc.constantFrom('a', 'é', '😀', '\ud800', '\udc00', 'z');
  fc.assert(
    fc.property(fc.array(unit, { maxLength: 3 * CHUNK_POINTS }), fc.nat(3 * CHUNK_POINTS + 10), fc.integer({ min: 1, max: 2 * CHUNK_POINTS }), (units, offset, limit) => {
      const text = units.join('');
      const points = Array.from(text);
      expect(pageOf(text, indexChunks(text), offset, limit)).toEqual({ text: points.slice(offset, offset + limit).join(''), totalChars: points.length });
    }),
    { numRuns: 60 },
  );
});

let redis: TestRedis;
const stores: Record<string, Store> = {};
beforeAll(async () => {
  redis = await startRedis({ own: true });
  const client = connectRedis(redis.url, { commandTimeoutMs: 5000 });
  await whenReady(client, 5000);
  stores.redis = createRedisStore(client, { timeoutMs: 5000 });
  stores.memory = createMemoryStore();
});
afterAll(async () => {
  await Promise.all(Object.values(stores).map((s) => s.close()));
  await redis?.close();
});

describe.each(['memory', 'redis'])('%s store', (kind) => {
  test.each(Object.keys(TEXTS) as Array<keyof typeof TEXTS>)('pages of a %s spill are the code points asked for, whole and by page', async (name) => {
    const store = stores[kind]!;
    const scope = fresh();
    const handle = newResultHandle(scope.sessionId);
    const text = TEXTS[name];
    const points = Array.from(text);
    await store.finishAttempt({ scope, op: 'op', spill: { handle, text, ttlSeconds: 60 } });
    expect(await store.readResult(scope.tenant, handle)).toBe(text);
    for (const [offset, limit] of offsets(points.length)) {
      const page = await store.readResultPage(scope.tenant, handle, offset, limit);
      expect({ offset, limit, ...page }).toEqual({ offset, limit, text: points.slice(offset, offset + limit).join(''), totalChars: points.length });
    }
    // Paged through with the default page, it is the whole text.
    let read = '';
    for (let offset = 0, pages = 0; offset < points.length && pages < 100; pages++) {
      const page = (await store.readResultPage(scope.tenant, handle, offset, 8000))!;
      read += page.text;
      offset += Array.from(page.text).length;
    }
    expect(read).toBe(text);
    expect(await store.readResultPage(`${scope.tenant}-other`, handle, 0, 10)).toBeUndefined();
    expect(await store.readResultPage(scope.tenant, newResultHandle(scope.sessionId), 0, 10)).toBeUndefined();
    expect(await store.readResultPage(scope.tenant, 'not-a-handle', 0, 10)).toBeUndefined();
  });

  test('a page of an ended session is gone', async () => {
    const store = stores[kind]!;
    const scope = fresh();
    const handle = newResultHandle(scope.sessionId);
    await store.finishAttempt({ scope, op: 'op', spill: { handle, text: TEXTS.plain, ttlSeconds: 60 } });
    await store.endSession(scope);
    expect(await store.readResultPage(scope.tenant, handle, 0, 10)).toBeUndefined();
  });
});

test('a spill an older version wrote as one string still reads, whole and by page (a rolling upgrade)', async () => {
  const scope = fresh();
  const handle = newResultHandle(scope.sessionId);
  const text = TEXTS.mixed;
  const points = Array.from(text);
  redis.cli('SET', sessionKeys(scope).result(handle), text, 'EX', '60');
  expect(await stores.redis!.readResult(scope.tenant, handle)).toBe(text);
  for (const [offset, limit] of offsets(points.length)) {
    expect(await stores.redis!.readResultPage(scope.tenant, handle, offset, limit)).toEqual({ text: points.slice(offset, offset + limit).join(''), totalChars: points.length });
  }
});
