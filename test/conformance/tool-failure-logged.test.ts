import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { throttledWarn, type Logger } from '../../src/log';
import { json, startApp, startToolServer, type ToolServer } from '../helpers/servers';

// An SRE probe: a tool answering 500 on every call, or timing out, wrote no log line: TOOL_POST
// events and metrics said so, the log said nothing, where the operator looks first. Now a failure
// that says something of the tool's health (what its breaker counts) is one warn line per tool and
// kind per 10 s, with how many it held back; failures the model caused are not logged, a crash is
// logged once (at error level, with its stack), and no line carries the tool's answer.

const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
const record = (level: string) => (message: string, fields: Record<string, unknown> = {}) => void lines.push({ level, message, fields });
const logger: Logger = { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };

let tools: ToolServer;
let d: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  tools = await startToolServer({
    '/500': json({ error: 'database password hunter2 rejected' }, 0, 500),
    '/400': json({ error: 'bad city' }, 0, 400),
    '/slow': json({ ok: true }, 2_000),
  });
  const tool = (name: string, path: string, extra = '') => `\n  - { name: ${name}, effect: read_only, retry: { max_attempts: 1 }, input_schema: '{"type":"object"}', http: { url: "${tools.url}${path}" }${extra} }`;
  const yaml = `tools:${tool('broken', '/500')}${tool('picky', '/400')}${tool('slow', '/slow', ', timeout_ms: 100')}${tool('sender', '/500').replace('read_only', 'side_effect')}
  - { name: crash, effect: side_effect, input_schema: '{"type":"object"}', builtin: { name: crash } }`;
  const builtins = new Map([['crash', async (args: unknown) => (args as { missing: { field: string } }).missing.field]]);
  d = await startApp(yaml, { logger, pipeline: { builtins } });
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

let n = 0;
const call = async (name: string) => (await d.dispatch.dispatch({ sessionId: `s-${name}-${n}`, calls: [{ id: `c${++n}`, name, arguments: '{"city":"Oslo"}' }] })).results[0]!;
const failures = (tool: string) => lines.filter((line) => line.message === 'a tool call failed' && line.fields.tool === tool);

test("a tool answering 5xx is one warn line with its kind, phase and status, not its answer nor the call's arguments", async () => {
  lines.length = 0;
  expect((await call('broken')).error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect(failures('broken')).toEqual([{ level: 'warn', message: 'a tool call failed', fields: { tool: 'broken', kind: 'TOOL_ERROR', phase: 'after', http_status: 500, tool_call_id: `c${n}`, attempt: 1, session_id: `s-broken-${n - 1}` } }]);
  expect(JSON.stringify(lines)).not.toMatch(/hunter2|Oslo/);
});

test('a timeout is logged as TIMEOUT, on its own key: a 5xx logged just before does not hold it back', async () => {
  lines.length = 0;
  expect((await call('broken')).error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect((await call('slow')).error?.kind).toBe(ErrorKind.TIMEOUT);
  expect(failures('slow')).toMatchObject([{ level: 'warn', fields: { kind: 'TIMEOUT', phase: 'during' } }]);
  expect(failures('slow')[0]!.fields).not.toHaveProperty('http_status');
});

test('a side-effecting tool failing is logged by what happened (its 5xx), though the model is told it may have run', async () => {
  lines.length = 0;
  expect((await call('sender')).error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect(failures('sender')).toMatchObject([{ fields: { kind: 'TOOL_ERROR', http_status: 500 } }]);
});

test("a failure the model caused (a 4xx) is not logged; a crash is logged once, at error level, not again as a failure", async () => {
  lines.length = 0;
  expect((await call('picky')).error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect((await call('crash')).error?.kind).toBe(ErrorKind.UNEXPECTED);
  expect(lines.filter((line) => line.level === 'warn' || line.level === 'error').map((line) => `${line.level} ${line.message}`)).toEqual(['error a tool crashed; its call ends UNEXPECTED']);
});

test('a throttled line says how many of its key it held back since the last one logged', () => {
  const logged: unknown[] = [];
  let now = 1_000_000;
  const spy = jest.spyOn(Date, 'now').mockImplementation(() => now);
  try {
    const warn = throttledWarn({ ...logger, warn: (message, fields) => void logged.push([message, fields]) }, 10_000);
    warn('down', { tool: 'a' });
    for (let i = 0; i < 4; i++) warn('down', { tool: 'a' });
    now += 10_000;
    warn('down', { tool: 'a' });
    now += 10_000;
    warn('down', { tool: 'a' });
    expect(logged).toEqual([['down', { tool: 'a' }], ['down', { tool: 'a', notLoggedBefore: 4 }], ['down', { tool: 'a' }]]);
  } finally {
    spy.mockRestore();
  }
});
