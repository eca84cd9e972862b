import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// An output cut by limits.max_tool_output_chars is `truncated`, even when its tool's
// max_result_chars holds what is left: nothing in the limits keeps max_result_chars at or below
// the output cap (a tool may set 100,000 under a cap of 300, or keep its default 8,000 under a cap
// of 1,000), and such a result said truncated: false although its output had lost its end. It has
// no result_handle: the rest was never kept.

let d: TestDispatch;
let tools: ToolServer;
const shout = new Map([['shout', async (args: unknown) => 'A'.repeat((args as { n: number }).n)]]);

beforeAll(async () => {
  tools = await startToolServer({ '/long': (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(5_000)) });
  // The whole app: its middleware holds the memo cache.
  d = await startApp(
    `
limits: { max_tool_output_chars: 300 }
tools:
  - name: shout
    effect: read_only
    max_result_chars: 100000
    input_schema: '{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}'
    builtin: { name: shout }
  - name: long
    effect: read_only
    http: { url: "${tools.url}/long" }
`,
    { pipeline: { builtins: shout } },
  );
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const call = (name: string, args: unknown, sessionId: string) =>
  d.dispatch.dispatch({ sessionId, calls: [{ id: 'c1', name, arguments: JSON.stringify(args) }] }).then((r) => r.results[0]!);

const CUT = "the tool's output was cut at 300 characters before bounding";

test('an output cut only by max_tool_output_chars is truncated, with no handle, and so is its cached hit', async () => {
  const first = await call('shout', { n: 1_000 }, 'cap-a');
  expect(first).toMatchObject({ isError: false, output: 'A'.repeat(300), truncated: true, resultHandle: '', cached: false });
  expect(first.warnings).toEqual([CUT]);
  const again = await call('shout', { n: 1_000 }, 'cap-a');
  expect(again).toMatchObject({ output: 'A'.repeat(300), truncated: true, cached: true, warnings: [CUT] });
});

test("an HTTP answer cut at the cap under the default max_result_chars is truncated", async () => {
  const result = await call('long', {}, 'cap-c');
  expect(result).toMatchObject({ isError: false, output: 'x'.repeat(300), truncated: true, resultHandle: '', warnings: [CUT] });
});

test('an output within the cap is not truncated', async () => {
  expect(await call('shout', { n: 300 }, 'cap-d')).toMatchObject({ output: 'A'.repeat(300), truncated: false, warnings: [] });
});

describe('cut again to fit max_response_bytes', () => {
  let small: TestDispatch;
  beforeAll(async () => {
    small = await startApp(
      `
limits: { max_tool_output_chars: 300, max_message_bytes: 16384, max_calls_per_turn: 50 }
tools:
  - name: shout
    effect: read_only
    max_result_chars: 100000
    input_schema: '{"type":"object"}'
    builtin: { name: shout }
`,
      { pipeline: { builtins: shout } },
    );
  });
  afterAll(() => small?.close());

  test('an output cut only by the cap keeps what the cap left readable with ReadResult', async () => {
    const calls = Array.from({ length: 50 }, (_, k) => ({ id: `c${k}`, name: 'shout', arguments: JSON.stringify({ n: 1_000, k }) }));
    const { results } = await small.dispatch.dispatch({ sessionId: 'cap-fit', calls });
    const refit = results.filter((r) => r.output !== 'A'.repeat(300));
    expect(refit.length).toBeGreaterThan(0);
    for (const result of results) expect(result.truncated).toBe(true);
    for (const result of refit) {
      expect(result.resultHandle).not.toBe('');
      const page = await small.dispatch.readResult({ resultHandle: result.resultHandle, offset: 0, limit: 1000 });
      expect(page.text).toBe('A'.repeat(300));
    }
  });
});
