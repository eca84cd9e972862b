import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// A side-effecting call's result is kept for replay with its warnings, the session budget's among
// them ("this session has 1 call left of its budget"). Replayed later, after other calls spent the
// budget, that count was told again as if still true. A replay runs nothing and its record's count
// is stale: it is not repeated; the replayed result's other warnings are.

let tools: ToolServer;
let d: TestDispatch;
beforeAll(async () => {
  tools = await startToolServer({ '/send': (_req, res) => void res.writeHead(200).end('sent') });
  d = await startApp(`
tools:
  - { name: send, effect: side_effect, input_schema: '{"type":"object"}', http: { url: "${tools.url}/send" } }
policies:
  - match: send
    budget: { max_calls_per_session: 3 }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const send = (id: string, to: string) => d.dispatch.dispatch({ sessionId: 'budgeted', calls: [{ id, name: 'send', arguments: JSON.stringify({ to }) }] }).then((r) => r.results[0]!);

test("a replay does not repeat its record's budget count, which other calls may have made stale", async () => {
  expect((await send('c1', 'a')).warnings).toEqual([]);
  const second = await send('c2', 'b');
  expect(second.warnings).toEqual([expect.stringContaining('this session has 1 call left of its')]);
  const third = await send('c3', 'c');
  expect(third.warnings).toEqual([expect.stringContaining('this was the last call of this session')]);
  // The second call again: replayed, not run; "1 call left" is no longer true.
  const again = await send('c4', 'b');
  expect(again.idempotentReplay).toBe(true);
  expect(again.isError).toBe(false);
  expect(again.output).toBe(second.output);
  expect(again.warnings.filter((w) => w.includes('call left') || w.includes('last call'))).toEqual([]);
});
