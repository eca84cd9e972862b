import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../../src/errors';
import { encodeDispatchResponse } from '../../src/server/dispatch-response-codec';
import { startDispatch, type TestDispatch } from '../helpers/servers';

// A turn of failures whose error texts are long and take many bytes a character (a worker or MCP
// tool failing with a CJK message and suggestion, or control characters the JSON escapes to six
// bytes each): compact-result.ts cut each text to 25 UTF-16 units at the least, four texts a
// result (message and suggestion, in the error JSON and in ToolError), ~530 bytes a result, and 128
// of them in a 64 KiB message were refused by grpc-js after every call ran: the client got
// RESOURCE_EXHAUSTED and none of the results. Failures are now cut to their least when that is
// still too much (least-error.ts): heads within a few bytes, a marker counting what was left out,
// the error JSON valid with every field, and a warning.

jest.setTimeout(30_000);

const CJK = '错误'.repeat(1_500);
const CONTROL = '\u0001'.repeat(3_000);
const FIELDS = ['error', 'tool', 'kind', 'message', 'recoverable', 'attempts', 'retried', 'suggestion'];

let runs = 0;
let d: TestDispatch;
beforeAll(async () => {
  const fail = (message: string) => async () => {
    runs++;
    throw new DispatchError(ErrorKind.TOOL_ERROR, message, { phase: 'during', suggestion: `${message}!` });
  };
  const ok = async (args: unknown) => `${JSON.stringify(args)} ${'o'.repeat(2_000)}`;
  const tool = (name: string) => `
  - name: ${name}
    effect: side_effect
    input_schema: '{"type":"object"}'
    builtin: { name: ${name} }`;
  d = await startDispatch(`limits: { max_message_bytes: 65536 }\ntools:${tool('cjk') + tool('control') + tool('ok')}`, {
    builtins: new Map([
      ['cjk', fail(CJK)],
      ['control', fail(CONTROL)],
      ['ok', ok],
    ]),
  });
});
afterAll(() => d?.close());

const callsOf = (names: readonly string[], tag: string) => names.map((name, k) => ({ id: `c${k}`, name, arguments: JSON.stringify({ k, tag }) }));

function expectLeast(result: { output: string; error?: { message: string; suggestion: string }; warnings: string[] }, text: string): void {
  const json = JSON.parse(result.output);
  expect(Object.keys(json)).toEqual(FIELDS);
  const [, head, omitted] = /^([^]+) \.\.\. \[(\d+) characters omitted\]$/.exec(json.message)!;
  expect(text.startsWith(head!)).toBe(true);
  expect([...head!].length + Number(omitted)).toBe([...text].length);
  expect(json.suggestion).toBe(`[${[...text].length + 1} characters omitted]`);
  expect(result.error!.message).toBe(json.message);
  expect(result.error!.suggestion).toBe(json.suggestion);
  expect(result.warnings).toEqual(['error texts cut to fit max_response_bytes']);
}

test('128 failures with long multi-byte or escaped error texts: every result comes back within max_message_bytes, the largest cut to their least', async () => {
  const calls = callsOf(Array.from({ length: 128 }, (_, k) => (k % 2 === 0 ? 'cjk' : 'control')), 'least');
  const response = await d.dispatch.dispatch({ sessionId: 's', calls });
  expect(runs).toBe(128);
  expect(encodeDispatchResponse(response).length).toBeLessThanOrEqual(65536);
  expect(response.results.map((r) => r.toolCallId)).toEqual(calls.map((c) => c.id));
  let least = 0;
  response.results.forEach((result, k) => {
    expect(result.isError).toBe(true);
    expect(result.error!.kind).toBe(ErrorKind.TOOL_ERROR);
    if (result.warnings.length === 0) {
      // Left as compaction cut it: still the error JSON, every field.
      expect(Object.keys(JSON.parse(result.output))).toEqual(FIELDS);
      expect(result.error!.message).toMatch(/characters cut\]$/);
    } else {
      expectLeast(result, k % 2 === 0 ? CJK : CONTROL);
      least++;
    }
  });
  // The escaped ones save the most: cut first, and enough of them.
  expect(least).toBeGreaterThan(0);
  expect(least).toBeLessThan(128);
});

test('128 failures with long CJK error texts alone fit too', async () => {
  const response = await d.dispatch.dispatch({ sessionId: 's', calls: callsOf(Array.from({ length: 128 }, () => 'cjk'), 'cjk') });
  expect(encodeDispatchResponse(response).length).toBeLessThanOrEqual(65536);
  expect(response.results).toHaveLength(128);
  for (const result of response.results) if (result.warnings.length > 0) expectLeast(result, CJK);
});

test('successful outputs are cut first; failures only as far as the turn still needs', async () => {
  const calls = callsOf(Array.from({ length: 128 }, (_, k) => (k % 4 === 0 ? 'cjk' : 'ok')), 'mixed');
  const response = await d.dispatch.dispatch({ sessionId: 's', calls });
  expect(encodeDispatchResponse(response).length).toBeLessThanOrEqual(65536);
  for (const result of response.results) {
    if (result.isError) expect(JSON.parse(result.output).kind).toBe('TOOL_ERROR');
    else expect(result.truncated).toBe(true);
  }
  // 32 failures fit beside 96 successes cut to their least: their texts are not cut to theirs.
  expect(response.results.filter((r) => r.warnings.includes('error texts cut to fit max_response_bytes'))).toEqual([]);
});

test('a turn that fits with its error texts compacted is not cut to the least', async () => {
  const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: callsOf(Array.from({ length: 40 }, () => 'cjk'), 'few') });
  for (const result of results) {
    expect(result.warnings).toEqual([]);
    expect(result.error!.message).toMatch(/^(错误)+错?\.\.\. \[\d+ characters cut\]$/);
  }
});
