import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import type { Logger } from '../../src/log';
import { closedPort, startApp } from '../helpers/servers';

// An on-call SRE's probe: `a tool call failed` named no session and no cause (a refused connection
// read as UNAVAILABLE alone), and a turn a loop stopped left no log line at any level, so nothing
// told which session looped. Now the failure line carries session_id and the system error's code,
// and a turn stopped LOOP_DETECTED or RECOVERY_EXHAUSTED is one warn line (throttled per reason and tool).

const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
const record = (level: string) => (message: string, fields: Record<string, unknown> = {}) => void lines.push({ level, message, fields });
const logger: Logger = { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };

let d: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  const port = await closedPort();
  d = await startApp(`tools:
  - { name: down, effect: read_only, retry: { max_attempts: 1 }, http: { url: "http://127.0.0.1:${port}/x" } }
  - { name: same, effect: read_only, loop: { warn_threshold: 2, stop_threshold: 3 }, builtin: { name: echo } }
`, { logger });
});
afterAll(() => d.close());

test('a refused connection: the failure line names the session and ECONNREFUSED', async () => {
  const [result] = (await d.dispatch.dispatch({ sessionId: 'sess-down', calls: [{ id: 'c1', name: 'down', arguments: '{}' }] })).results;
  expect(result!.error?.kind).toBe(ErrorKind.UNAVAILABLE);
  const line = lines.find((l) => l.message === 'a tool call failed');
  expect(line?.fields).toMatchObject({ tool: 'down', kind: 'UNAVAILABLE', cause: 'ECONNREFUSED', session_id: 'sess-down', tool_call_id: 'c1' });
});

test('a turn stopped LOOP_DETECTED is one warn line with its session, tool and call', async () => {
  const calls = ['1', '2', '3', '4'].map((n) => ({ id: `l${n}`, name: 'same', arguments: '{"q":1}' }));
  await expect(d.dispatch.dispatch({ sessionId: 'sess-loop', calls })).rejects.toMatchObject({ code: 10 });
  const stopped = lines.filter((l) => l.message === 'a turn was stopped');
  expect(stopped).toEqual([{ level: 'warn', message: 'a turn was stopped', fields: { reason: 'LOOP_DETECTED', tool: 'same', tool_call_id: 'l4', session_id: 'sess-loop' } }]);
});
