import { DispatchMode, EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import { bearer, startMetricsApp, tokenEntry, type MetricsApp } from './metrics-app';

// Calls of a parallel turn that a cancellation ended before they ran name whatever the model
// sent: they count as a tool's calls (stats, metrics) only when such a tool is registered, so
// made-up names fill no shared table and crowd out no other tenant's tools.

const EVIL = bearer('tok-evil');
const CONFIG = `
auth:
  tokens:
${tokenEntry('evil', 'tok-evil', ['dispatch', 'subscribe'])}tools:
  - name: slow
    effect: read_only
    concurrency_safe: true
    builtin: { name: sleep }
  - name: later
    effect: read_only
    builtin: { name: echo }
`;

let d: MetricsApp;
beforeAll(async () => {
  d = await startMetricsApp(CONFIG);
});
afterAll(async () => d?.close());

test('a cancelled parallel turn counts its registered tools, not the names it made up', async () => {
  const calls = [{ id: 's', name: 'slow', arguments: '{"ms":2000}' }, { id: 'l', name: 'later', arguments: '{}' }];
  for (let i = 0; i < 30; i++) calls.push({ id: `c${i}`, name: `junk-${i}`, arguments: '{}' });
  // Cancelled once the slow call runs: a fixed 100 ms came before the turn began on a loaded
  // machine (a clean-clone CI run), and then nothing was counted at all.
  const cancel = new AbortController();
  const events = d.dispatch.subscribe({ sessionId: 'p' }, EVIL);
  events.on('data', (e: { kind: EventKind; name: string }) => e.kind === EventKind.TOOL_PRE && cancel.abort());
  events.on('error', () => undefined);
  await new Promise((resolve) => events.once('metadata', resolve));
  try {
    await expect(d.dispatch.dispatch({ sessionId: 'p', mode: DispatchMode.PARALLEL, calls }, { ...EVIL, signal: cancel.signal })).rejects.toThrow();
  } finally {
    events.cancel();
  }
  await new Promise((r) => setTimeout(r, 300));
  const names = (await d.registry.getToolStats({ tool: '' }, EVIL)).stats.filter((s) => s.calls > 0n).map((s) => s.tool);
  // The running call and the registered one that never started count; no made-up name does.
  expect(names.sort()).toEqual(['later', 'slow']);
});
