import { DispatchMode } from '../../gen/dispatch/v1/dispatch_pb';
import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { startGuardedApp, until } from '../guards/helpers';

// Issue 2 item 5: "per-tool timeouts counted from executor invocation". The guards add waits
// before the executor: the policy endpoint's answer, an approval, a concurrency slot. None may be
// charged to the tool's timeout_ms: each tool below takes 250 ms of its 600 ms, after a wait
// longer than the whole timeout.

let tools: ToolServer;
let d: Awaited<ReturnType<typeof startGuardedApp>>;
beforeAll(async () => {
  tools = await startToolServer({ '/work': json({ done: true }, 250), '/policy': json({ decision: 'allow' }, 800) });
  const tool = (name: string) => `
  - { name: ${name}, effect: read_only, concurrency_safe: true, timeout_ms: 600, retry: { max_attempts: 1 }, input_schema: '{"type":"object"}', http: { url: "${tools.url}/work" } }`;
  d = await startGuardedApp(`
tools:${tool('checked')}${tool('asked')}${tool('capped')}
policies:
  - { match: checked, endpoint: { url: "${tools.url}/policy", timeout_ms: 2000 } }
  - { match: asked, decide: ask, reason: look first }
  - { match: capped, concurrency: { max_in_flight: 1, wait_ms: 3000 } }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

test('a slow policy endpoint', async () => {
  const started = Date.now();
  const { results } = await d.dispatch.dispatch({ sessionId: 'p', calls: [{ id: 'c', name: 'checked', arguments: '{}' }] });
  expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  expect(results[0]).toMatchObject({ isError: false, output: '{"done":true}' });
});

test('an approval granted after longer than the timeout', async () => {
  const pending = d.dispatch.dispatch({ sessionId: 'a', interactive: true, calls: [{ id: 'c', name: 'asked', arguments: '{}' }] });
  await until(() => d.events.some((e) => e.kind === 'APPROVAL_REQUESTED'));
  await new Promise((r) => setTimeout(r, 800));
  const id = d.events.find((e) => e.kind === 'APPROVAL_REQUESTED')!.detail;
  expect((await d.dispatch.resolveApproval({ approvalId: id, approve: true })).resolved).toBe(true);
  expect((await pending).results[0]).toMatchObject({ isError: false, output: '{"done":true}' });
});

test('a wait for a concurrency slot', async () => {
  const calls = [0, 1, 2, 3].map((i) => ({ id: `c${i}`, name: 'capped', arguments: `{"n":${i}}` }));
  const { results } = await d.dispatch.dispatch({ sessionId: 'c', mode: DispatchMode.PARALLEL, calls });
  // The fourth waited ~750 ms for its slot, more than its whole timeout, and then ran in time.
  expect(results.map((r) => r.output)).toEqual(Array(4).fill('{"done":true}'));
});
