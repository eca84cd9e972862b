// dispatchctl's numeric arguments (read's OFFSET, a turn file's numbers, --timeout) against a
// real gRPC server on 127.0.0.1: a bad one is a usage error naming it, never a failed RPC.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dispatchctlAt, runDispatchctl } from '../helpers/dispatchctl';
import { startApp, type TestDispatch } from '../helpers/servers';

const YAML = `
tools:
  - name: echo
    effect: read_only
    max_result_chars: 100
    builtin: { name: echo }
  - name: sleep
    effect: read_only
    concurrency_safe: true
    timeout_ms: 10000
    builtin: { name: sleep }
`;

let d: TestDispatch;
const dir = mkdtempSync(join(tmpdir(), 'ctl-args-'));
beforeAll(async () => {
  d = await startApp(YAML);
});
afterAll(async () => {
  await d.close();
  rmSync(dir, { recursive: true, force: true });
});
const ctl = dispatchctlAt(() => d.address);

test.each(['abc', '1.5', '4294967296', '1e3', ''])('read HANDLE %j: OFFSET is a usage error', async (offset) => {
  const run = await ctl('read', 'some-handle', offset);
  expect(run.code).toBe(2);
  expect(run.err.split('\n')[0]).toBe(`dispatchctl: OFFSET must be a whole number from 0 to 4294967295, got ${JSON.stringify(offset)}`);
});

test('read HANDLE OFFSET reads the whole text from OFFSET', async () => {
  const { results } = await d.dispatch.dispatch({ sessionId: 'r', calls: [{ id: 'c', name: 'echo', arguments: JSON.stringify({ text: 'x'.repeat(500) }) }] });
  expect(results[0]!.truncated).toBe(true);
  const { text } = await d.dispatch.readResult({ resultHandle: results[0]!.resultHandle, offset: 0, limit: 65_536 });
  const run = await runDispatchctl(['--address', d.address, 'read', results[0]!.resultHandle, '490']);
  expect(run).toEqual({ code: 0, out: `${text.slice(490)}\n`, err: '' });
  expect(text.length).toBeGreaterThan(500);
});

test.each([
  ['turn', '"x"'],
  ['turn', '-1'],
  ['turn', '1.5'],
  ['max_concurrency', '4294967296'],
  ['max_concurrency', 'true'],
])('dispatch FILE: "%s": %s is refused, exit 1, naming the file and the field', async (field, value) => {
  const file = join(dir, `${field}.json`);
  writeFileSync(file, `{"${field}": ${value}, "calls": [{"name": "echo", "arguments": {}}]}`);
  const run = await ctl('dispatch', file);
  expect(run.code).toBe(1);
  expect(run.err.split('\n')[0]).toBe(`dispatchctl: ${file}: "${field}" must be a whole number from 0 to 4294967295, got ${value}`);
});

test('dispatch FILE without a calls list is refused, exit 1,', async () => {
  const file = join(dir, 'no-calls.json');
  writeFileSync(file, '{"session_id": "s"}');
  const run = await ctl('dispatch', file);
  expect(run.code).toBe(1);
  expect(run.err.split('\n')[0]).toBe(`dispatchctl: ${file}: "calls" must be a list of {"id","name","arguments"}`);
});

test.each(['parallel', 'PARALLEL', 'DISPATCH_MODE_PARALLEL', 'dispatch_mode_parallel'])('dispatch FILE: mode %j runs the turn in parallel', async (mode) => {
  const file = join(dir, `mode-${mode}.json`);
  // Two 300 ms sleeps: together well under 600 ms in parallel, at least 600 ms one after the other
  // (a session of their own, so that no result is memoized).
  writeFileSync(file, JSON.stringify({ session_id: `mode-${mode}`, mode, calls: [{ name: 'sleep', arguments: { ms: 300 } }, { name: 'sleep', arguments: { ms: 300, n: 2 } }] }));
  const started = Date.now();
  const run = await ctl('dispatch', file);
  expect(run.code).toBe(0);
  expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  expect(Date.now() - started).toBeLessThan(580);
});

test.each(['sequential', 'DISPATCH_MODE_SEQUENTIAL'])('dispatch FILE: mode %j runs the turn in order', async (mode) => {
  const file = join(dir, `mode-${mode}.json`);
  writeFileSync(file, JSON.stringify({ session_id: `mode-${mode}`, mode, calls: [{ name: 'sleep', arguments: { ms: 300 } }, { name: 'sleep', arguments: { ms: 300, n: 2 } }] }));
  const started = Date.now();
  expect((await ctl('dispatch', file)).code).toBe(0);
  expect(Date.now() - started).toBeGreaterThanOrEqual(600);
});

test.each([['"paralel"', '"paralel"'], ['2', '2'], ['"constructor"', '"constructor"'], ['"__proto__"', '"__proto__"']])('dispatch FILE: mode %s is refused, exit 1, naming the file (it ran sequential, silently)', async (value, shown) => {
  const file = join(dir, 'bad-mode.json');
  writeFileSync(file, `{"mode": ${value}, "calls": [{"name": "echo", "arguments": {}}]}`);
  const run = await ctl('dispatch', file);
  expect(run.code).toBe(1);
  expect(run.err.split('\n')[0]).toBe(`dispatchctl: ${file}: "mode" must be "parallel" or "sequential" (or DISPATCH_MODE_PARALLEL, DISPATCH_MODE_SEQUENTIAL), got ${shown}`);
});

test.each([['{"calls": [', 'not valid JSON: '], ['[1, 2]', 'must hold a JSON object'], ['null', 'must hold a JSON object']])('dispatch FILE holding %s is refused, exit 1, naming the file', async (text, message) => {
  const file = join(dir, 'bad-json.json');
  writeFileSync(file, text);
  const run = await ctl('dispatch', file);
  expect(run.code).toBe(1);
  expect(run.err.split('\n')[0]).toContain(`dispatchctl: ${file}: ${message}`);
});

test.each([
  ['{"session_id": "s", "calls": [{"name": "echo", "args": {"q": 1}}]}', 'calls[0].args: unknown key "args" (did you mean arguments?)'],
  ['{"sessionId": "s", "calls": [{"name": "echo", "arguments": {}}]}', 'sessionId: unknown key "sessionId" (did you mean session_id?)'],
  ['{"calls": [{"name": "echo", "arguments": {}, "timeout": 5}]}', 'calls[0].timeout: unknown key "timeout" (expected one of id, name, arguments)'],
  ['{"calls": [5]}', 'calls[0] must be an object {"id","name","arguments"}'],
])('dispatch FILE with an unknown key (it ran without it, silently) is refused, exit 1, naming its path: %s', async (text, message) => {
  const file = join(dir, 'unknown-key.json');
  writeFileSync(file, text);
  const run = await ctl('dispatch', file);
  expect(run.code).toBe(1);
  expect(run.err.split('\n')[0]).toBe(`dispatchctl: ${file}: ${message}`);
});

test('--timeout SECONDS is each call\'s deadline', async () => {
  const started = Date.now();
  const run = await ctl('--timeout', '0.5', 'call', 'sleep', '{"ms": 3000}');
  expect(run.code).toBe(1);
  expect(run.err).toMatch(/^dispatchctl: DEADLINE_EXCEEDED: /);
  expect(Date.now() - started).toBeLessThan(2_500);
  expect(await ctl('--timeout', '5', 'call', 'sleep', '{"ms": 10}')).toMatchObject({ code: 0, err: '' });
});

test.each(['0', 'abc', '-5', '', 'Infinity', '2147484'])('--timeout %j is a usage error', async (value) => {
  const run = await ctl(`--timeout=${value}`, 'tools', 'list');
  expect(run.code).toBe(2);
  expect(run.err.split('\n')[0]).toBe(`dispatchctl: --timeout must be a number of seconds greater than 0 and at most 2147483, got ${JSON.stringify(value)}`);
});
