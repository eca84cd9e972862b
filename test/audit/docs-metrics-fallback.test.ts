import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { startMetricsApp, type MetricsApp } from '../telemetry/metrics-app';

// docs/metrics.md, dispatch_tool_retries_total: "a call whose recovery switched to its
// `fallback_tool` counts as retried, under the tool the model asked for" (and the retry rate
// counts it). No test read the counters of a call that fell back.

let tools: ToolServer;
let d: MetricsApp;
beforeAll(async () => {
  tools = await startToolServer({ '/down': json({ error: 'busy' }, 0, 503), '/ok': json({ ok: true }) });
  d = await startMetricsApp(`
tools:
  - { name: primary, effect: read_only, retry: { max_attempts: 1 }, fallback_tool: backup, http: { url: "${tools.url}/down" } }
  - { name: backup, effect: read_only, http: { url: "${tools.url}/ok" } }
`);
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});

test('a call that fell back to its fallback_tool is one retried call of the tool asked for, with both attempts', async () => {
  const { results } = await d.dispatch.dispatch({ sessionId: 'fb', calls: [{ id: 'c', name: 'primary', arguments: '{}' }] });
  expect(results[0]).toMatchObject({ isError: false, resolvedToolName: 'backup', attempts: 2 });
  const m = await d.scrape();
  const primary = { tenant: 'default', tool: 'primary' };
  expect(m.value('dispatch_tool_calls_total', { ...primary, outcome: 'ok' })).toBe(1);
  expect(m.value('dispatch_tool_retries_total', primary)).toBe(1);
  expect(m.value('dispatch_tool_attempts_total', primary)).toBe(2);
  expect(m.value('dispatch_tool_rate', { ...primary, rate: 'retry' })).toBe(1);
  expect(m.value('dispatch_tool_attempt_outcomes_total', { ...primary, outcome: 'ok', retry: 'true' })).toBe(1);
  expect(m.samples.filter((s) => s.labels.tool === 'backup')).toEqual([]);
  const { stats } = await d.registry.getToolStats({ tool: 'primary' });
  expect(stats[0]!.rates!.retry).toBe(1);
});
