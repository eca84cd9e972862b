import { authPlugin, createAuthPlugin } from '../../src/app/plugins/auth-plugin';
import { PLUGINS } from '../../src/app/plugins';
import { createMemoryStore } from '../../src/store';
import { startApp, startToolServer } from '../helpers/servers';
import { authYaml, bearer, type TestToken } from './support/auth-app';

// Found in a tenant-isolation hunt: with the memory store, one tenant's traffic past the
// store-wide bounds evicted another tenant's idempotency record (its retried payment ran twice) and
// its spilled result (ReadResult NOT_FOUND). Past a bound, a tenant now loses only its own oldest
// while it holds more than an equal share. The budgets are shrunk here; the hunt flooded the
// defaults with 48 results of 2 M characters.

const FLOODER: TestToken = { token: 'tok-flooder', tenant: 'flooder', scopes: ['dispatch'] };
const VICTIM: TestToken = { token: 'tok-victim', tenant: 'victim', scopes: ['dispatch'] };

test("one tenant's flood past the memory store's bounds leaves another's record and spill, and evicts its own oldest", async () => {
  let charged = 0;
  const big = new Map<string, number>();
  const tools = await startToolServer({
    '/charge': (_q, r) => void r.writeHead(200).end(`charged #${++charged} ${'z'.repeat(20_000)}`),
    '/big': (q, r) => {
      const args = JSON.stringify(q.body.arguments);
      big.set(args, (big.get(args) ?? 0) + 1);
      r.writeHead(200).end(`${args}${'y'.repeat(100_000)}`);
    },
  });
  const yaml = `tools:
  - { name: charge, effect: side_effect, http: { url: "${tools.url}/charge" } }
  - { name: big, effect: side_effect, http: { url: "${tools.url}/big" } }
${authYaml([FLOODER, VICTIM])}`;
  // Records keep the bounded output (8,000 characters by default); spills the whole text.
  const store = createMemoryStore({ maxRecordChars: 100_000, maxSpilledChars: 400_000 });
  const factories = PLUGINS.map((f) => (f === authPlugin ? createAuthPlugin({ env: {} }) : f));
  const app = await startApp(yaml, { pipeline: { store } }, factories);
  try {
    const charge = { id: 'c1', name: 'charge', arguments: '{"amount":5}' };
    const first = (await app.dispatch.dispatch({ sessionId: 'pay', calls: [charge] }, bearer(VICTIM.token))).results[0]!;
    expect(first.resultHandle).not.toBe('');
    const flood = (i: number) => ({ id: `f${i}`, name: 'big', arguments: `{"i":${i}}` });
    for (let turn = 0; turn < 6; turn++) {
      const calls = [0, 1, 2, 3].map((i) => flood(turn * 4 + i));
      await app.dispatch.dispatch({ sessionId: `flood-${turn}`, calls }, bearer(FLOODER.token));
    }
    // 24 records of ~8,000 characters and 24 spills of 100,000: both budgets passed many times over.
    const retry = (await app.dispatch.dispatch({ sessionId: 'pay', calls: [{ ...charge, id: 'c2' }] }, bearer(VICTIM.token))).results[0]!;
    expect(retry.idempotentReplay).toBe(true);
    expect(charged).toBe(1);
    // Still there (NOT_FOUND once evicted); ReadResult answers a page of it.
    const kept = await app.dispatch.readResult({ resultHandle: first.resultHandle }, bearer(VICTIM.token));
    expect(kept.text.slice(0, 11)).toBe('charged #1 ');
    // The flooder's own oldest went: its first call runs again, its last is replayed.
    const again = await app.dispatch.dispatch({ sessionId: 'flood-0', calls: [flood(0)] }, bearer(FLOODER.token));
    expect(again.results[0]!.idempotentReplay).toBe(false);
    const last = await app.dispatch.dispatch({ sessionId: 'flood-5', calls: [flood(23)] }, bearer(FLOODER.token));
    expect(last.results[0]!.idempotentReplay).toBe(true);
    expect([big.get('{"i":0}'), big.get('{"i":23}')]).toEqual([2, 1]);
  } finally {
    await app.close();
    await tools.close();
  }
}, 60_000);
