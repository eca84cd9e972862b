import { startApp, startToolServer, type ToolServer } from '../helpers/servers';

// A side-effecting call answered from its idempotency record returns the warnings of the result it
// replays, and then its own: the model reads this call's result, and what was done to this call's
// arguments (a lenient repair) is news to it even when the record's first call needed none. A
// warning the record holds already (the same repair of the same arguments) is not said twice.

jest.setTimeout(30_000);

let tools: ToolServer;
let d: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  tools = await startToolServer({ '/order': (_req, res) => void res.writeHead(200).end('ordered') });
  d = await startApp(`
tools:
  - name: order
    effect: side_effect
    lenient_arguments: true
    input_schema: '{"type":"object","properties":{"item":{"type":"string"},"count":{"type":"integer"}},"required":["item","count"]}'
    http: { url: "${tools.url}/order" }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const order = (session: string, id: string, args: string) => d.dispatch.dispatch({ sessionId: session, calls: [{ id, name: 'order', arguments: args }] }).then((r) => r.results[0]!);
const repaired = 'repaired /count: "5" -> 5 (string to number)';

test("a replay of a call whose arguments were repaired says so, after the replayed result's warnings", async () => {
  const first = await order('replay-own', 'c1', '{"item":"pen","count":5}');
  expect(first).toMatchObject({ isError: false, idempotentReplay: false, warnings: [] });
  const second = await order('replay-own', 'c2', '{"item":"pen","count":"5"}');
  expect(second).toMatchObject({ isError: false, idempotentReplay: true, output: 'ordered' });
  expect(second.warnings).toEqual([repaired]);
  expect(tools.count('/order')).toBe(1);
});

test('a replay does not repeat a warning the replayed result holds already', async () => {
  const first = await order('replay-own-same', 'c1', '{"item":"ink","count":"5"}');
  expect(first.warnings).toEqual([repaired]);
  const second = await order('replay-own-same', 'c2', '{"item":"ink","count":"5"}');
  expect(second).toMatchObject({ idempotentReplay: true, warnings: [repaired] });
  expect(tools.count('/order')).toBe(2);
});
