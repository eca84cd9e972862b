import { createMemoryStore } from '../../src/store';
import { startApp } from '../helpers/servers';

// A side-effecting call the store cannot record (the memory store's claims in progress at their
// bound, as Redis out of memory) is refused before it runs, saying why: not "unreachable".

test('a claim refused by a full store is STORE_UNAVAILABLE with a message that fits', async () => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const builtins = new Map([['hold', async () => (await held, 'done')]]);
  const app = await startApp('tools:\n  - name: hold\n    effect: side_effect\n    builtin: { name: hold }\n', { pipeline: { builtins, store: createMemoryStore({ maxClaims: 1 }) } });
  try {
    const first = app.dispatch.dispatch({ sessionId: 's1', calls: [{ id: 'a', name: 'hold', arguments: '{"n":1}' }] });
    await new Promise((r) => setTimeout(r, 200));
    const second = await app.dispatch.dispatch({ sessionId: 's2', calls: [{ id: 'b', name: 'hold', arguments: '{"n":2}' }] });
    const error = JSON.parse(second.results[0]!.output) as { kind: string; message: string };
    expect(error.kind).toBe('STORE_UNAVAILABLE');
    expect(error.message).toBe('the idempotency store holds as many calls in progress as it may and could not record this call (try again once some end), so this side-effecting call was not executed');
    release();
    expect((await first).results[0]!.output).toBe('done');
  } finally {
    release();
    await app.close();
  }
});
