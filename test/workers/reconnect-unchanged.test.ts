// A worker says hello with its tools on every reconnection, and each tool was compiled again (0.4-1 s
// of event loop per 256 KiB of schema, stalling every call in flight). The tools dispatch holds,
// spec for spec, are now kept as they are: the same compiled tool after the reconnection, which
// still serves calls; a tool whose spec changed is compiled anew.
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { DEFAULT_TENANT } from '../../src/server/principal';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { echoAnswer } from './worker-harness';

const SCHEMA = JSON.stringify({ type: 'object', properties: { text: { type: 'string', pattern: '^[a-z]+$' } }, required: ['text'] });
const tools = (description = 'echo') => [
  { name: 'w_echo', description: 'echo', inputSchema: SCHEMA, effect: Effect.READ_ONLY },
  { name: 'w_other', description, inputSchema: SCHEMA, effect: Effect.READ_ONLY },
];

let t: WorkerApp;
beforeEach(async () => {
  t = await startWorkerApp();
});
afterEach(() => t.close());

const held = (name: string) => t.app.deps.registry.lookup(DEFAULT_TENANT, name);
const call = async (text: string) => (await t.dispatch.dispatch({ sessionId: 's1', calls: [{ id: 'c1', name: 'w_echo', arguments: JSON.stringify({ text }) }] })).results[0]!;

test('a worker reconnecting with the same tools keeps the compiled tools, and its calls are served', async () => {
  const first = await t.worker({ id: 'w1', tools: tools(), answer: echoAnswer('w1') });
  const [echo, other] = [held('w_echo'), held('w_other')];
  expect(echo).toBeDefined();
  expect(JSON.parse((await call('hi')).output)).toEqual({ worker: 'w1', args: { text: 'hi' } });
  first.disconnect();
  await first.ended;

  const second = await t.worker({ id: 'w1', tools: tools(), answer: echoAnswer('w1-again') });
  expect(held('w_echo')).toBe(echo);
  expect(held('w_other')).toBe(other);
  const served = await call('again');
  expect(served.isError).toBe(false);
  expect(JSON.parse(served.output)).toEqual({ worker: 'w1-again', args: { text: 'again' } });
  expect(second.assignments).toHaveLength(1);
  // The kept schema still validates.
  const refused = await call('NOT LOWER');
  expect(refused.isError).toBe(true);
  expect(second.assignments).toHaveLength(1);

  // A changed tool is compiled anew; the unchanged one is kept.
  second.disconnect();
  await second.ended;
  await t.worker({ id: 'w1', tools: tools('changed'), answer: echoAnswer('w1-changed') });
  expect(held('w_echo')).toBe(echo);
  expect(held('w_other')).not.toBe(other);
  expect(held('w_other')?.spec.description).toBe('changed');
  expect(JSON.parse((await call('third')).output)).toEqual({ worker: 'w1-changed', args: { text: 'third' } });
});
