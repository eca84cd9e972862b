import { startDaemon } from '../helpers/daemon';
import { json, startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// An SRE's probe: a side-effecting tool with timeout_ms 120000 under a 30 s drain grace; SIGTERM
// 2 s into its call, and at the grace's end the call was cut off (its client told to retry, the
// retry OUTCOME_UNKNOWN for an hour, though the tool wrote), with nothing in the log but
// "draining" and "stopped". dispatchd now warns at start of side-effecting tools that outlast
// the grace, and at the grace's end of the turns it cuts off.

jest.setTimeout(30_000);

let tools: ToolServer;
beforeAll(async () => {
  tools = await startToolServer({ '/slow': json({ written: true }, 3_000) });
});
afterAll(() => tools.close());

test("the grace's end with a turn still running is a warning naming how many", async () => {
  const lines: { message: string; fields: Record<string, unknown> }[] = [];
  const record = (message: string, fields: Record<string, unknown> = {}) => void lines.push({ message, fields });
  const d = await startApp(`tools:\n  - { name: slow_write, effect: side_effect, input_schema: '{"type":"object"}', http: { url: "${tools.url}/slow" } }\n`, { logger: { debug() {}, info() {}, warn: record, error: record } });
  try {
    const pending = d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'slow_write', arguments: '{}' }] }).catch((error: Error) => error);
    while (tools.count('/slow') === 0) await new Promise((r) => setTimeout(r, 20));
    await d.server.shutdown(300);
    await pending;
    expect(lines).toContainEqual({
      message: "drain grace ended with turns still running: they are cut off now (their clients get UNAVAILABLE SHUTTING_DOWN, naming the calls that had finished; a side-effecting call still running is OUTCOME_UNKNOWN)",
      fields: { graceMs: 300, turns: 1, callsAtMost: 1 },
    });
  } finally {
    await d.close();
  }
});

test('a drain that finishes within its grace says nothing of it', async () => {
  const lines: string[] = [];
  const d = await startApp('tools: []\n', { logger: { debug() {}, info() {}, warn: (m: string) => void lines.push(m), error: (m: string) => void lines.push(m) } });
  await d.server.shutdown(300);
  await d.close();
  expect(lines.filter((m) => m.startsWith('drain grace'))).toEqual([]);
});

test('start-up warns of the side-effecting tools whose timeout_ms is longer than the grace, not of read-only ones', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'grace-'));
  const config = join(dir, 'dispatch.yaml');
  writeFileSync(config, `tools:
  - { name: long_write, effect: side_effect, timeout_ms: 120000, input_schema: '{"type":"object"}', builtin: { name: echo } }
  - { name: short_write, effect: side_effect, timeout_ms: 5000, input_schema: '{"type":"object"}', builtin: { name: echo } }
  - { name: long_read, effect: read_only, timeout_ms: 120000, input_schema: '{"type":"object"}', builtin: { name: echo } }
`);
  const daemon = await startDaemon(['--config', config, '--grace', '30000']);
  try {
    const line = async () => daemon.stderr().split('\n').find((l) => l.includes('longer than the drain'));
    // Written just after the serving line: it may come in the next chunk.
    for (let i = 0; i < 100 && !(await line()); i++) await new Promise((r) => setTimeout(r, 20));
    expect(JSON.parse((await line())!)).toMatchObject({ level: 'warn', graceMs: 30_000, tools: ['long_write'], count: 1, longestMs: 120_000 });
  } finally {
    daemon.child.kill('SIGKILL');
    await daemon.exited;
  }
});
