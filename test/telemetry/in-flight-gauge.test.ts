import { startMetricsApp, type MetricsApp } from './metrics-app';

// dispatch_tool_in_flight showed a capped tool only once a scrape caught it busy: a tool whose
// attempts all ran between two scrapes had no series at all, though docs/metrics.md promises 0
// once idle. A tool that took a slot is now shown from then on, at 0 when idle.

let d: MetricsApp;
beforeAll(async () => {
  d = await startMetricsApp(`
tools:
  - { name: capped, effect: read_only, builtin: { name: echo } }
  - { name: never_called, effect: read_only, builtin: { name: echo } }
  - { name: uncapped, effect: read_only, builtin: { name: echo } }
policies:
  - match: [capped, never_called]
    concurrency: { max_in_flight: 1 }
`);
});
afterAll(() => d?.close());

test('a capped tool whose attempts ran between two scrapes reads 0, not nothing; one never called and an uncapped one have no series', async () => {
  const before = await d.scrape();
  expect(before.value('dispatch_tool_in_flight', { tenant: '_shared', tool: 'capped' })).toBeUndefined();
  for (const [i, name] of ['capped', 'capped', 'uncapped'].entries()) {
    const { results } = await d.dispatch.dispatch({ sessionId: `s${i}`, calls: [{ id: `c${i}`, name, arguments: `{"i":${i}}` }] });
    expect(results[0]!.error).toBeUndefined();
  }
  const after = await d.scrape();
  expect(after.value('dispatch_tool_in_flight', { tenant: '_shared', tool: 'capped' })).toBe(0);
  expect(after.value('dispatch_tool_in_flight', { tenant: '_shared', tool: 'never_called' })).toBeUndefined();
  expect(after.value('dispatch_tool_in_flight', { tenant: '_shared', tool: 'uncapped' })).toBeUndefined();
});
