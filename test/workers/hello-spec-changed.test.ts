import { Effect } from '../../gen/dispatch/v1/tool_pb';
import type { Logger } from '../../src/log';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { eventually } from './worker-harness';

// A worker author's probe: a second worker's hello for a hosted tool, with another schema and
// effect, replaced the tool's spec for the workers still hosting it (the last hello wins), and the
// spec stayed after that worker left, without a log line. It is warned of now, naming the worker
// and the tools; a hello with the same spec (a worker reconnecting, a second replica) is not.

const lines: { message: string; fields?: Record<string, unknown> }[] = [];
const logger: Logger = { debug() {}, info() {}, warn: (message, fields) => void lines.push({ message, fields }), error() {} };
const WARNING = "a worker's hello changed the input_schema or effect of tools an earlier hello registered: every call of them is checked against the new spec now, whichever worker runs it, and it stays after this worker leaves";
const echo = { name: 'w_echo', description: 'echo', inputSchema: '{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}', effect: Effect.READ_ONLY };

let t: WorkerApp;
beforeEach(async () => {
  lines.length = 0;
  t = await startWorkerApp({}, { logger });
});
afterEach(() => t.close());

test('a hello with another schema or effect for a hosted tool is warned of', async () => {
  await t.worker({ id: 'first', tools: [echo] });
  await t.worker({ id: 'stray', tools: [{ ...echo, inputSchema: '{"type":"object","properties":{"n":{"type":"integer"}}}', effect: Effect.SIDE_EFFECT }] });
  await eventually(() => lines.some((l) => l.message === WARNING), 5_000, 'the warning');
  expect(lines.find((l) => l.message === WARNING)?.fields).toEqual({ worker: 'stray', tenant: 'default', tools: ['w_echo'] });
});

test('a hello with the same spec is not', async () => {
  await t.worker({ id: 'first', tools: [echo] });
  await t.worker({ id: 'second', tools: [echo] });
  await new Promise((r) => setTimeout(r, 200));
  expect(lines.filter((l) => l.message === WARNING)).toEqual([]);
});
