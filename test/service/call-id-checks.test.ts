// A call id reaches events, spans, logs, a worker's assignment and dispatchctl: Dispatch took any
// text, of any length (a 4 MiB one, NUL, ESC, CR, LF, a right-to-left override). It now refuses one
// longer than 256 characters or holding a control or invisible format character, INVALID_ARGUMENT
// naming the call and the position, before anything runs; ParseToolCalls gives such a model id a
// fresh one, so what it returns can be dispatched. The real server on port 0.
import * as grpc from '@grpc/grpc-js';
import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

jest.setTimeout(20_000);

let tools: ToolServer;
let d: TestDispatch;
beforeAll(async () => {
  tools = await startToolServer({ '/hit': async (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('ran') });
  d = await startApp(`tools:\n  - name: hit\n    effect: read_only\n    skip_memoize: true\n    input_schema: '{"type":"object"}'\n    http: { url: "${tools.url}/hit" }\n`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

let sessions = 0;
/** A turn of calls of `hit` with these ids, in a session of its own (each runs the same call: no loop builds up across tests). */
const turn = (...ids: string[]) => d.dispatch.dispatch({ sessionId: `ids-${++sessions}`, calls: ids.map((id) => ({ id, name: 'hit', arguments: '{}' })) });
const refusal = (details: string) => ({ code: grpc.status.INVALID_ARGUMENT, details });
const ILLEGAL = 'a call id may not hold control characters or invisible or bidirectional format characters; nothing was run';

test.each([
  ['ESC', 'ok\x1b[2J', 'U+001B at position 3'],
  ['NUL', '\u0000', 'U+0000 at position 1'],
  ['LF', 'call_1\nTURN_END', 'U+000A at position 7'],
  ['CR', 'c\r', 'U+000D at position 2'],
  ['DEL', 'c\x7f', 'U+007F at position 2'],
  ['C1 CSI', 'c\u009b31m', 'U+009B at position 2'],
  ['a right-to-left override', 'call_\u202e1', 'U+202E at position 6'],
  ['a zero-width space', 'call\u200b_1', 'U+200B at position 5'],
  ['a tag character, after an astral one', '😀\u{e0041}', 'U+E0041 at position 2'],
])('a call id holding %s is refused, naming the call and the position; nothing runs', async (_what, id, where) => {
  const before = tools.count('/hit');
  await expect(turn('fine', id)).rejects.toMatchObject(refusal(`calls[1].id holds ${where}: ${ILLEGAL}`));
  expect(tools.count('/hit')).toBe(before);
});

test('a call id longer than 256 characters is refused; 256 are taken', async () => {
  const before = tools.count('/hit');
  await expect(turn('x'.repeat(257))).rejects.toMatchObject(refusal('calls[0].id is 257 characters long, over the limit of 256; nothing was run'));
  expect(tools.count('/hit')).toBe(before);
  const { results } = await turn('x'.repeat(256));
  expect(results.map((r) => [r.toolCallId, r.output])).toEqual([['x'.repeat(256), 'ran']]);
});

test('the 256 are code points: 256 emoji (512 UTF-16 units) are taken, 257 are refused as 257 characters', async () => {
  const { results } = await turn('😀'.repeat(256));
  expect(results.map((r) => [r.toolCallId, r.output])).toEqual([['😀'.repeat(256), 'ran']]);
  await expect(turn('😀'.repeat(257))).rejects.toMatchObject(refusal('calls[0].id is 257 characters long, over the limit of 256; nothing was run'));
  const parsed = await d.dispatch.parseToolCalls({ text: `<tool_call>{"name": "hit", "arguments": {}, "id": "${'😀'.repeat(200)}"}</tool_call>` });
  expect(parsed.calls.map((c) => c.id)).toEqual(['😀'.repeat(200)]);
});

test("ids models and SDKs write are taken as they are: OpenAI's, Anthropic's, Kimi's, a UUID, non-Latin text, spaces, none", async () => {
  const ids = ['call_abc123XYZ', 'toolu_01A09q90qw90lq917835lq9', 'functions.get_weather:0', '3f2b8c1e-9d4a-4e6b-8f0a-2c5d7e9b1a3f', '呼叫 1', ''];
  const { results } = await turn(...ids);
  expect(results.map((r) => [r.toolCallId, r.output])).toEqual(ids.map((id) => [id, 'ran']));
});

test('ParseToolCalls gives a model id Dispatch would refuse a fresh one, and what it returns dispatches', async () => {
  const text = '<tool_call>{"name": "hit", "arguments": {}, "id": "c1\\r\\u001b[8m"}</tool_call><tool_call>{"name": "hit", "arguments": {}, "id": "kept_1"}</tool_call>';
  const parsed = await d.dispatch.parseToolCalls({ text });
  expect(parsed.calls.map((c) => c.id)).toEqual([expect.stringMatching(/^call_[A-Za-z0-9]{24}$/), 'kept_1']);
  const { results } = await d.dispatch.dispatch({ sessionId: 'parsed', calls: parsed.calls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args })) });
  expect(results.map((r) => r.output)).toEqual(['ran', 'ran']);
});
