import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { ensureDist } from '../security/support/child-server';

// Found in a review: counting trajectory memory per tenant wrapped each entry (one a successful
// call, kept a day) in an object of its own, mapped to from the entry, on top of TenantShares' set
// entry: ~206 bytes of heap an entry of ~50 characters besides its text, against ~100 before. The
// budget now counts the entry itself, which carries its tenant, size and session list: ~113.

const ENTRIES = 100_000;

/** Heap bytes a memory entry of ~50 characters takes in the memory store, its text aside (a child with --expose-gc, on dist). */
function bytesPerEntry(): number {
  const store = JSON.stringify(join(__dirname, '..', '..', 'dist', 'src', 'store', 'memory-store.js'));
  const script = `
    const { createMemoryStore } = require(${store});
    (async () => {
      const N = ${ENTRIES};
      const store = createMemoryStore({ heapLimitBytes: 8 * 1024 ** 3 });
      const texts = Array.from({ length: N }, (_, i) => Buffer.from(('tool=echo; input={"x":' + i + '}; result=ok').padEnd(50, '.'), 'latin1').toString('latin1'));
      const scopes = Array.from({ length: N / 200 }, (_, i) => ({ tenant: 't' + (i % 10), sessionId: 's' + i }));
      const write = (scope, entry) => store.finishAttempt({ scope, op: 'op', memory: { entry, max: 1000, ttlSeconds: 86400 } });
      // A first entry in each session: the session's state is not counted.
      for (const scope of scopes) await write(scope, 'w');
      await new Promise((r) => setTimeout(r, 20));
      global.gc(); global.gc();
      const before = process.memoryUsage().heapUsed;
      for (let i = 0; i < N; i++) await write(scopes[Math.floor(i / 200)], texts[i]);
      await new Promise((r) => setTimeout(r, 20));
      global.gc(); global.gc();
      const after = process.memoryUsage().heapUsed;
      if ((await store.memory(scopes[0])).length !== 201) throw new Error('entries not kept');
      console.log((after - before) / N);
    })().catch((e) => { console.error(e); process.exit(1); });`;
  return Number(execFileSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8', timeout: 60_000 }));
}

test('a trajectory-memory entry costs its text and ~110 bytes of heap, no wrapper or map entry of its own', () => {
  ensureDist();
  const bytes = bytesPerEntry();
  expect(bytes).toBeGreaterThan(50);
  expect(bytes).toBeLessThan(150);
}, 90_000);
