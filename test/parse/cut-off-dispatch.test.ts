import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { json, startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// Over the wire, as a backend runs a local model: ParseToolCalls, then Dispatch of what it found.
// A cut-off output came back as a complete call and Dispatch ran it (deploy with the schema's
// defaults, an email to a partial list), and `+9007199254740993` came back rounded, so the
// exact-number guard let the tool run on another account (found by the parse hunt).

let tools: ToolServer;
let d: TestDispatch;

beforeAll(async () => {
  tools = await startToolServer({ '/deploy': json({ ok: true }), '/send': json({ ok: true }), '/close': json({ ok: true }) });
  d = await startDispatch(`
tools:
  - name: deploy
    effect: side_effect
    input_schema: '{"type":"object","properties":{"env":{"type":"string","enum":["staging","production"],"default":"production"},"version":{"type":"string","default":"latest"}}}'
    http: { url: "${tools.url}/deploy" }
  - name: send_email
    effect: side_effect
    input_schema: '{"type":"object","properties":{"to":{"type":"array","items":{"type":"string"}},"subject":{"type":"string"}},"required":["to","subject"]}'
    http: { url: "${tools.url}/send" }
  - name: close_account
    effect: side_effect
    input_schema: '{"type":"object","properties":{"account_id":{"type":"integer"}},"required":["account_id"]}'
    http: { url: "${tools.url}/close" }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const OFFERED = ['deploy', 'send_email', 'close_account'];
let session = 0;

/** Parses `text` as a backend would, then dispatches whatever calls came back. */
async function parseThenDispatch(text: string) {
  const parsed = await d.dispatch.parseToolCalls({ text, offeredTools: OFFERED });
  const calls = parsed.calls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args }));
  const results = calls.length === 0 ? [] : (await d.dispatch.dispatch({ sessionId: `cut-${session++}`, calls, offeredTools: OFFERED })).results;
  return { parsed, results };
}

test('a cut-off call comes back as no call, its text remaining, and nothing runs', async () => {
  const before = tools.received.length;
  for (const text of [
    '<tool_call>{"name":"deploy"',
    '<tool_call>{"name":"deploy","arguments":{',
    '<function=deploy>{',
    '[TOOL_CALLS][{"name":"deploy","arguments":{',
    '<tool_call>{"name":"send_email","arguments":{"to":["ceo@x.com",',
    '<tool_call>{"name":"send_email","arguments":{"to":["ceo@x.com"],"subject":"Q3 numbers",',
    // Cut after a complete value: deploy ran on staging, where `,"version":"1.4.2"` may have followed.
    '<tool_call>{"name":"deploy","arguments":{"env":"staging"',
    '<function=deploy>{"env":"staging"',
  ]) {
    const { parsed, results } = await parseThenDispatch(`Let me do that.\n${text}`);
    expect({ text, calls: parsed.calls, remaining: parsed.remainingText, format: parsed.format, results }).toEqual({
      text,
      calls: [],
      remaining: `Let me do that.\n${text}`,
      format: 'none',
      results: [],
    });
  }
  expect(tools.received.slice(before)).toEqual([]);
});

// `"arguments":null` where the text ended ran deploy with {}, so on production, the schema's
// default (found by the last session): the null may have been the start of more.
test('a call whose null arguments the end of the text may have cut comes back as no call, and nothing runs', async () => {
  const before = tools.received.length;
  for (const text of [
    '<tool_call>{"name":"deploy","arguments":null',
    '<tool_call>{"name":"deploy","parameters":null',
    "<tool_call>{'name':'deploy','arguments':None",
    '[TOOL_CALLS]deploy[ARGS]null',
    '{"tool_calls":[{"id":"c1","function":{"name":"deploy","arguments":null',
  ]) {
    const { parsed, results } = await parseThenDispatch(`Let me do that.\n${text}`);
    expect({ text, calls: parsed.calls, remaining: parsed.remainingText, format: parsed.format, results }).toEqual({
      text,
      calls: [],
      remaining: `Let me do that.\n${text}`,
      format: 'none',
      results: [],
    });
  }
  expect(tools.received.slice(before)).toEqual([]);
  // Ended by its brace, null arguments are none: deploy runs with the schema's defaults.
  const { results } = await parseThenDispatch('<tool_call>{"name":"deploy","arguments":null}');
  expect(results.map((r) => r.isError)).toEqual([false]);
  expect(tools.received.slice(before).map((r) => [r.path, r.body.arguments])).toEqual([['/deploy', { env: 'production', version: 'latest' }]]);
});

// In reasoning opened in the prompt, a mention of <think> paired with the </think> that ended it, so
// the call drafted before the mention came back as a call and ran (found by the last session).
test('a call drafted in reasoning opened in the prompt, before a mention of <think>, does not run; the call after it does', async () => {
  const before = tools.received.length;
  const draft = '<tool_call>{"name":"send_email","arguments":{"to":["ceo@x.com"],"subject":"draft"}}</tool_call>';
  const real = '<tool_call>{"name":"deploy","arguments":{"env":"staging"}}</tool_call>';
  const { parsed, results } = await parseThenDispatch(`Maybe ${draft} first? No, and no calls inside <think> tags.\n</think>\n\n${real}`);
  expect(parsed.calls.map((c) => c.name)).toEqual(['deploy']);
  expect(results.map((r) => r.isError)).toEqual([false]);
  expect(tools.received.slice(before).map((r) => [r.path, r.body.arguments])).toEqual([['/deploy', { env: 'staging', version: 'latest' }]]);
});

test('the complete call runs, with the arguments the model wrote', async () => {
  const before = tools.received.length;
  const { results } = await parseThenDispatch('<tool_call>{"name":"deploy","arguments":{"env":"staging","version":"1.4.2-rc1"}}</tool_call>');
  expect(results.map((r) => r.isError)).toEqual([false]);
  expect(tools.received.slice(before).map((r) => [r.path, r.body.arguments])).toEqual([['/deploy', { env: 'staging', version: '1.4.2-rc1' }]]);
});

test('an id beyond 2^53 written with a plus sign reaches the exact-number guard unrounded; nothing runs', async () => {
  const { parsed, results } = await parseThenDispatch('<tool_call>{"name":"close_account","arguments":{"account_id":+9007199254740993}}</tool_call>');
  expect(parsed.calls.map((c) => c.arguments)).toEqual(['{"account_id":9007199254740993}']);
  expect(results.map((r) => r.error?.kind)).toEqual([ErrorKind.INVALID_ARGUMENTS]);
  expect(tools.count('/close')).toBe(0);
});
