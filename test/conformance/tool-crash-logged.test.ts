import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../../src/errors';
import type { Logger } from '../../src/log';
import { startApp } from '../helpers/servers';

// The first seed: a panicking tool becomes a soft error, "logged at error level, never crashing
// the run"; the second seed logs an unexpected exception (logger.exception) before wrapping it;
// STYLE: the original error in `cause` is logged, never sent. DESIGN section 9: secrets are
// redacted from logs, which show the shape of arguments, not their values. A crash reached the
// model as UNEXPECTED but was logged nowhere: the operator had no stack to find the defect by.

const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
const record = (level: string) => (message: string, fields: Record<string, unknown> = {}) => void lines.push({ level, message, fields });
const logger: Logger = { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };
const SECRET = 'sk-proj-4f9aT7qLm2Xc8VbN1kR5sD0wE3yU6iO';

let d: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  const builtins = new Map([
    ['crash', async (args: unknown) => (args as { missing: { field: string } }).missing.field],
    ['leaky', async () => { throw new Error(`could not call the API with key ${SECRET}`); }],
    ['crash2', async (args: unknown) => (args as { missing: { field: string } }).missing.field],
    ['leaky2', async () => { throw new Error(`could not call the API with key ${SECRET}`); }],
    ['leaky3', async () => { throw new Error(`could not call the API with key ${SECRET}`); }],
    ['refuse', async () => { throw new DispatchError(ErrorKind.TOOL_ERROR, 'no such row', { phase: 'after' }); }],
  ]);
  const tool = (name: string) => `\n  - { name: ${name}, effect: read_only, input_schema: '{"type":"object"}', builtin: { name: ${name} } }`;
  d = await startApp(`tools:${['crash', 'leaky', 'crash2', 'leaky2', 'leaky3', 'refuse'].map(tool).join('')}`, { logger, pipeline: { builtins } });
});
afterAll(() => d.close());

const call = async (name: string, args = '{"city":"Oslo"}') => (await d.dispatch.dispatch({ sessionId: `s-${name}`, calls: [{ id: 'c1', name, arguments: args }] })).results[0]!;
const errors = () => lines.filter((line) => line.level === 'error');

test('a crashing tool is UNEXPECTED for the model and one error line with its stack for the operator, without argument values', async () => {
  lines.length = 0;
  const result = await call('crash');
  expect(result.error).toMatchObject({ kind: ErrorKind.UNEXPECTED, message: "the tool crashed: Cannot read properties of undefined (reading 'field')" });
  expect(errors()).toHaveLength(1);
  const [line] = errors();
  expect(line!.message).toBe('a tool crashed; its call ends UNEXPECTED');
  expect(line!.fields).toMatchObject({ tool: 'crash', tool_call_id: 'c1', attempt: 1 });
  expect(line!.fields.error).toMatch(/^TypeError: Cannot read properties of undefined \(reading 'field'\)\n\s+at /);
  expect(JSON.stringify(line)).not.toContain('Oslo');
});

test("a crash's logged error has its secrets redacted", async () => {
  lines.length = 0;
  const result = await call('leaky');
  expect(result.error?.kind).toBe(ErrorKind.UNEXPECTED);
  expect(errors()).toHaveLength(1);
  expect(errors()[0]!.fields.error).toMatch(/^Error: could not call the API with key \[REDACTED/);
  expect(JSON.stringify(lines)).not.toContain(SECRET);
});

test('an error the tool reports as such (a DispatchError) is no crash: nothing is logged at error level', async () => {
  lines.length = 0;
  const result = await call('refuse');
  expect(result.error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect(errors()).toEqual([]);
});

test("a tool crashing on every call is logged once per 10 s, each tool on its own", async () => {
  lines.length = 0;
  for (let i = 0; i < 5; i++) expect((await call('crash2')).error?.kind).toBe(ErrorKind.UNEXPECTED);
  expect((await call('leaky2')).error?.kind).toBe(ErrorKind.UNEXPECTED);
  expect(errors().map((line) => line.fields.tool)).toEqual(['crash2', 'leaky2']);
});

test("a secret in a crash's message does not reach the model either", async () => {
  const result = await call('leaky3');
  expect(result.output).not.toContain(SECRET);
});
