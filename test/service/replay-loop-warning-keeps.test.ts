import { startApp, startToolServer, type ToolServer } from '../helpers/servers';

// A replayed result carries the warnings of the result it replays (redis/replay-warnings); the
// replay that a loop warning rides on must keep them too, the loop warning added after them.

jest.setTimeout(30_000);

let tools: ToolServer;
let d: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  tools = await startToolServer({ '/send': (_req, res) => void res.writeHead(200).end('s'.repeat(500)) });
  d = await startApp(`
limits: { max_tool_output_chars: 300 }
tools:
  - name: send
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/send" }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

test('the replay a loop warning rides on keeps the warnings of the result it replays', async () => {
  const send = (id: string) => d.dispatch.dispatch({ sessionId: 'replay-warned', calls: [{ id, name: 'send', arguments: '{"to":"a@b.c"}' }] }).then((r) => r.results[0]!);
  const cut = "the tool's output was cut at 300 characters before bounding";
  const first = await send('c1');
  expect(first.warnings).toEqual([cut]);
  expect(await send('c2')).toMatchObject({ idempotentReplay: true, warnings: [cut] });
  const third = await send('c3');
  expect(third.idempotentReplay).toBe(true);
  expect(third.warnings).toEqual([cut, 'loop warning: send returned the same result the last 3 times it was called with the same input; use the result you have or change the approach (at 10 such results, the next identical call ends the turn)']);
  expect(tools.count('/send')).toBe(1);
});
