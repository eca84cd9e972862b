import { status } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { json, startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

let tools: ToolServer;
let d: TestDispatch;
const crashed = new Map([['crash', async () => { throw new Error('boom'); }]]);

beforeAll(async () => {
  tools = await startToolServer({ '/ok': json({ ok: true }), '/slow': json({ late: true }, 2000) });
  d = await startDispatch(
    `
tools:
  - name: weather
    effect: read_only
    lenient_arguments: true
    input_schema: '{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","default":1}},"required":["city"],"additionalProperties":false}'
    http: { url: "${tools.url}/ok" }
  - name: crash
    effect: read_only
    builtin: { name: crash }
  - name: slow_write
    effect: side_effect
    timeout_ms: 200
    http: { url: "${tools.url}/slow" }
`,
    { builtins: crashed },
  );
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const call = (name: string, args: string, sessionId = 'kinds') => d.dispatch.dispatch({ sessionId, calls: [{ id: 'c1', name, arguments: args }] }).then((r) => r.results[0]!);

test('UNKNOWN_TOOL suggests the closest name and runs nothing', async () => {
  const result = await call('wheather', '{}');
  expect(result.isError).toBe(true);
  expect(result.error?.kind).toBe(ErrorKind.UNKNOWN_TOOL);
  expect(JSON.parse(result.output)).toEqual({
    error: true,
    tool: 'wheather',
    kind: 'UNKNOWN_TOOL',
    message: 'tool "wheather" not found; did you mean "weather"?',
    recoverable: false,
    attempts: 0,
    retried: false,
    suggestion: 'Call "weather" instead, if it is what you meant. Available tools: crash, slow_write, weather.',
  });
});

test('a name outside offered_tools is answered without dispatch', async () => {
  const before = tools.count();
  const { results } = await d.dispatch.dispatch({ sessionId: 'offered', offeredTools: ['crash'], calls: [{ id: 'c1', name: 'weather', arguments: '{"city":"Oslo"}' }] });
  expect(results[0]!.error?.kind).toBe(ErrorKind.UNKNOWN_TOOL);
  expect(results[0]!.error?.message).toBe('tool "weather" is not available; it was not offered to you');
  expect(tools.count()).toBe(before);
});

test('bad JSON is INVALID_ARGUMENTS and the tool is not executed', async () => {
  const before = tools.count();
  const result = await call('weather', '{"city": "Oslo"');
  expect(result.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
  expect(result.error?.message).toMatch(/^arguments are not valid JSON \(.+\); the tool was not executed$/);
  expect(tools.count()).toBe(before);
});

test('a schema violation names the path, the value and the expected fragment', async () => {
  const result = await call('weather', '{"city": ["Oslo"]}');
  expect(result.error?.message).toBe('invalid arguments: /city: got ["Oslo"] (array); must be string; expected {"type":"string"}; the tool was not executed');
  const missing = await call('weather', '{"town": "Oslo"}');
  expect(missing.error?.message).toBe('invalid arguments: /: missing required property "city"; /: unexpected property "town" (the schema allows no other properties); the tool was not executed');
});

test('a schema violation with made-up keys of 300,000 characters gets a message of about 1,000 characters (found in review)', async () => {
  const key = 'k'.repeat(300_000);
  const result = await call('weather', JSON.stringify({ city: 'Oslo', [`${key}1`]: 1, [`${key}2`]: 2, [`${key}3`]: 3 }));
  const line = `/: unexpected property "${'k'.repeat(200)}..." (the schema allows no other properties)`;
  expect(result.error?.message).toBe(`invalid arguments: ${[line, line, line].join('; ')}; the tool was not executed`);
  expect(result.output.length).toBeLessThan(2_000);
});

test('lenient repair is applied, listed in warnings, and defaults are filled', async () => {
  const before = tools.count();
  const result = await call('weather', '{"city": "Oslo", "days": "3"}');
  expect(result.isError).toBe(false);
  expect(result.warnings).toEqual(['repaired /days: "3" -> 3 (string to number)']);
  const defaulted = await call('weather', '{"city": "Tromsø"}');
  expect(defaulted.warnings).toEqual(['applied default /days: 1']);
  expect(tools.received[before]!.body.arguments).toEqual({ city: 'Oslo', days: 3 });
  expect(tools.received[before + 1]!.body.arguments).toEqual({ city: 'Tromsø', days: 1 });
});

test('a default filled in after a null is dropped is listed too (found in review)', async () => {
  const before = tools.count();
  const result = await call('weather', '{"city": "Oslo", "days": null}');
  expect(result.warnings).toEqual(['repaired /days: null dropped (optional field)', 'applied default /days: 1']);
  expect(tools.received[before]!.body.arguments).toEqual({ city: 'Oslo', days: 1 });
});

test('a crashing tool is UNEXPECTED and the server keeps serving', async () => {
  const result = await call('crash', '{}');
  expect(result.error?.kind).toBe(ErrorKind.UNEXPECTED);
  expect(result.error?.message).toBe('the tool crashed: boom');
  expect(result.attempts).toBe(1);
  expect((await call('weather', '{"city":"Oslo"}')).isError).toBe(false);
});

test('a side-effecting timeout is TIMEOUT, not retried, and an identical re-call is OUTCOME_UNKNOWN', async () => {
  const before = tools.count('/slow');
  const first = await call('slow_write', '{"x":1}', 'timeouts');
  expect(first.error?.kind).toBe(ErrorKind.TIMEOUT);
  expect(first.error?.recoverable).toBe(false);
  expect(first.attempts).toBe(1);
  const again = await call('slow_write', '{"x":1}', 'timeouts');
  expect(again.error?.kind).toBe(ErrorKind.OUTCOME_UNKNOWN);
  expect(JSON.parse(again.output).suggestion).toMatch(/verify its effect/);
  expect(tools.count('/slow')).toBe(before + 1);
});

test('too many calls in one turn is INVALID_ARGUMENT', async () => {
  const calls = Array.from({ length: 129 }, (_, i) => ({ id: `c${i}`, name: 'weather', arguments: '{}' }));
  await expect(d.dispatch.dispatch({ sessionId: 's', calls })).rejects.toMatchObject({ code: status.INVALID_ARGUMENT, details: '129 calls in one turn, over the limit of 128' } as Partial<ServiceError>);
  await expect(d.dispatch.dispatch({ sessionId: '', calls: [] })).rejects.toMatchObject({ code: status.INVALID_ARGUMENT, details: 'session_id is required' });
});

test('arguments over the size or depth limit are refused before parsing', async () => {
  const deep = `${'['.repeat(100)}${']'.repeat(100)}`;
  const result = await call('weather', `{"city": ${deep}}`);
  expect(result.error?.message).toBe('arguments nest deeper than 64 levels; the tool was not executed');
  const big = await call('weather', JSON.stringify({ city: 'x'.repeat(1024 * 1024) }));
  expect(big.error?.message).toMatch(/^arguments are 1048587 bytes, over the limit of 1048576/);
});
