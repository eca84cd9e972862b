import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { DEFAULT_TENANT } from '../../src/server';
import { createMemoryStore } from '../../src/store';
import { startApp } from '../helpers/servers';

// A trajectory entry holds 500 characters of a result, not the whole result: V8 keeps the string
// a slice was cut from alive as long as the slice, so an entry of 532 characters kept a 2 MiB
// output in the heap for the entry's 24 hours (200 entries per session, 10,000 sessions).

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapMiB = () => (gc(), gc(), process.memoryUsage().heapUsed / 1048576);

test('trajectory entries of large results do not keep the results in the heap', async () => {
  const SIZE = 2 * 1024 * 1024;
  let n = 0;
  // Each output is built at run time and differs (no constant shared between calls); the warm-up call is the first.
  const builtins = new Map([['big', async () => `${String(++n).padStart(8, '0')}\u{1F600}${'y'.repeat(SIZE)}`]]);
  const store = createMemoryStore();
  const app = await startApp('tools:\n  - name: big\n    effect: read_only\n    max_result_chars: 3000000\n    builtin: { name: big }\n', { pipeline: { builtins, store } });
  try {
    await app.dispatch.dispatch({ sessionId: 'warm', calls: [{ id: 'w', name: 'big', arguments: '{"i":-1}' }] });
    const before = heapMiB();
    for (let i = 0; i < 20; i++) await app.dispatch.dispatch({ sessionId: `mem-${i}`, calls: [{ id: 'c', name: 'big', arguments: JSON.stringify({ i }) }] });
    const grown = heapMiB() - before;
    // 20 outputs of 2 MiB are ~40 MiB of one-byte strings (twice that as two-byte): before, the heap grew by that.
    expect(grown).toBeLessThan(15);
    const [entry] = await store.memory({ tenant: DEFAULT_TENANT, sessionId: 'mem-3' });
    expect(entry).toMatch(/^tool=big; input=\{"i":3\}; result=00000005\u{1F600}y+$/u);
    expect(entry!.length).toBeLessThan(560);
  } finally {
    await app.close();
  }
});

test("a skip_redaction tool's output reaches its caller as it is, and its trajectory entry is redacted (DESIGN 9: memory)", async () => {
  const secret = 'password=hunter2-prod-db-Pa55';
  const builtins = new Map([['leak', async () => `config: ${secret}`]]);
  const store = createMemoryStore();
  const app = await startApp('tools:\n  - name: leak\n    effect: read_only\n    skip_redaction: true\n    builtin: { name: leak }\n', { pipeline: { builtins, store } });
  try {
    const res = await app.dispatch.dispatch({ sessionId: 'skip', calls: [{ id: 'c', name: 'leak', arguments: '{}' }] });
    expect(res.results[0]!.output).toBe(`config: ${secret}`);
    const [entry] = await store.memory({ tenant: DEFAULT_TENANT, sessionId: 'skip' });
    expect(entry).toMatch(/^tool=leak; input=\{\}; result=config: password=\[REDACTED/);
    expect(entry).not.toContain('hunter2');
  } finally {
    await app.close();
  }
});
