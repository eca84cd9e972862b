import { codePointLength } from '../../src/pipeline';
import { boundErrorOutput, ERROR_MESSAGE_FLOOR } from '../../src/pipeline/bound-error';
import { startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// A failed call's output (the error JSON the model reads) is held to its tool's max_result_chars
// as a successful one is: its message (then its suggestion) cut with a marker, the JSON still
// valid, every field kept, down to a floor (80 code points of message, 40 of suggestion). An HTTP
// 400 quotes up to 500 characters of its body, and a validation failure lists every error: a tool
// with max_result_chars 100 gave the model an 864-character error.

let tools: ToolServer;
let d: TestDispatch;
// Surrogate pairs throughout: a cut must count them as one and never split one.
const BODY = `${'🙂'.repeat(30)}${'x'.repeat(1_200)}`;

beforeAll(async () => {
  tools = await startToolServer({ '/400': (_req, res) => void res.writeHead(400).end(BODY) });
  const tool = (name: string, effect: string, max: number, extra = '') => `
  - name: ${name}
    effect: ${effect}
    max_result_chars: ${max}${extra}
    retry: { initial_backoff_ms: 10, max_backoff_ms: 20 }
    http: { url: "${tools.url}/400" }`;
  const many = Array.from({ length: 12 }, (_, i) => `"field_number_${i}":{"type":"integer"}`).join(',');
  d = await startDispatch(`tools:${[
    tool('ro_small', 'read_only', 400),
    tool('ro_least', 'read_only', 100),
    tool('ro_wide', 'read_only', 8000),
    tool('se_small', 'side_effect', 400),
    tool('strict', 'read_only', 400, `\n    input_schema: '{"type":"object","properties":{${many}},"required":[${Array.from({ length: 12 }, (_, i) => `"field_number_${i}"`).join(',')}]}'`),
  ].join('')}`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

let session = 0;
const call = async (name: string, args = '{}', sessionId = `error-bound-${session++}`) =>
  (await d.dispatch.dispatch({ sessionId, calls: [{ id: 'c1', name, arguments: args }] })).results[0]!;

const FIELDS = ['error', 'tool', 'kind', 'message', 'recoverable', 'attempts', 'retried', 'suggestion'];

test('an HTTP 400 quoting a long body fits max_result_chars, valid JSON with every field', async () => {
  const result = await call('ro_small');
  expect(result.isError).toBe(true);
  expect(codePointLength(result.output)).toBeLessThanOrEqual(400);
  const json = JSON.parse(result.output);
  expect(Object.keys(json)).toEqual(FIELDS);
  expect(json.message).toMatch(/^the tool answered HTTP 400: 🙂/);
  expect(json.message).toMatch(/ \.\.\. \[\d+ characters omitted\]$/);
  expect(result.output).not.toMatch(/\\ud[89a-f]/i);
  expect(json.tool).toBe('ro_small');
  expect(json.kind).toBe('TOOL_ERROR');
});

test('below the floor the message keeps 80 code points and the suggestion 40, each with its marker', async () => {
  const { output } = await call('ro_least');
  const json = JSON.parse(output);
  expect(Object.keys(json)).toEqual(FIELDS);
  const [, kept, omitted] = /^([^]*) \.\.\. \[(\d+) characters omitted\]$/.exec(json.message)!;
  expect(codePointLength(kept!)).toBe(80);
  expect(codePointLength(kept!) + Number(omitted)).toBe(codePointLength('the tool answered HTTP 400: ') + 30 + 440 + 3);
  const [, suggestion] = /^([^]*) \.\.\. \[\d+ characters omitted\]$/.exec(json.suggestion)!;
  expect(codePointLength(suggestion!)).toBe(40);
  // The floor, not the 864 characters of before.
  expect(codePointLength(output)).toBeLessThan(320);
});

test('an error within max_result_chars is untouched', async () => {
  const json = JSON.parse((await call('ro_wide')).output);
  expect(json.message).toBe(`the tool answered HTTP 400: ${'🙂'.repeat(30)}${'x'.repeat(440)}...`);
});

test('a side-effecting call replayed from its record returns the same cut output', async () => {
  const first = await call('se_small', '{}', 'error-bound-se');
  const again = await call('se_small', '{}', 'error-bound-se');
  expect(codePointLength(first.output)).toBeLessThanOrEqual(400);
  expect(again.idempotentReplay).toBe(true);
  // The same cut error JSON but for its suggestion, a replayed error's (replayed-error-suggestion.test.ts), and as bounded.
  expect(codePointLength(again.output)).toBeLessThanOrEqual(400);
  const { suggestion: told, ...rest } = JSON.parse(again.output);
  const { suggestion: _first, ...firstRest } = JSON.parse(first.output);
  expect(told).toMatch(/^The same call again returns this same answer/);
  expect(rest).toEqual({ ...firstRest, message: expect.stringMatching(/^the tool answered HTTP 400: /) });
});

test('a validation failure listing many errors fits max_result_chars', async () => {
  const result = await call('strict');
  expect(result.isError).toBe(true);
  expect(codePointLength(result.output)).toBeLessThanOrEqual(400);
  expect(Object.keys(JSON.parse(result.output))).toEqual(FIELDS);
});

test('escapes, lone surrogates and every bound: valid JSON, within the bound or at the floor', () => {
  const message = `${'"\n\\'.repeat(100)}\ud83d${'🙂'.repeat(50)}${'\u0001'.repeat(50)}`;
  const json = { error: true, tool: 't', kind: 'TOOL_ERROR', message, recoverable: false, attempts: 1, retried: false, suggestion: 's'.repeat(200) } as const;
  const whole = JSON.stringify(json);
  for (let max = 100; max <= codePointLength(whole) + 1; max += 7) {
    const output = boundErrorOutput(json, max);
    const parsed = JSON.parse(output);
    expect(Object.keys(parsed)).toEqual(FIELDS);
    if (codePointLength(output) > max) expect(codePointLength(/^([^]*) \.\.\. \[/.exec(parsed.message)![1]!)).toBe(ERROR_MESSAGE_FLOOR);
    if (max >= codePointLength(whole)) expect(output).toBe(whole);
  }
});
