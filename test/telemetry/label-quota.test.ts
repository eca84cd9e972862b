// Each tenant takes at most its quota of the metrics' (tenant, tool) label pairs (half of
// max_label_pairs by default, or telemetry.max_label_pairs_per_tenant); its later pairs share
// `tenant="<t>", tool="_overflow"`. Before, one tenant registering and calling as many tools as
// max_label_pairs took every pair, and every other tenant's series fell into the global `_overflow`.
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { parseConfig } from '../../src/config';
import { createLabelPairs, telemetrySettings } from '../../src/telemetry';
import { bearer, startMetricsApp, tokenEntry } from './metrics-app';

const ACME = bearer('tok-acme');
const GLOBEX = bearer('tok-globex');

test("a tenant past its quota folds into its own _overflow pair and leaves the other tenants' series their labels", async () => {
  const app = await startMetricsApp(`
auth:
  tokens:
${tokenEntry('acme', 'tok-acme', ['dispatch', 'admin'])}${tokenEntry('globex', 'tok-globex', ['dispatch', 'admin'])}telemetry: { max_label_pairs: 20, max_label_pairs_per_tenant: 2 }
tools:
  - { name: shout, effect: read_only, builtin: { name: echo } }
`);
  try {
    const names = Array.from({ length: 20 }, (_, i) => `t${i}`);
    await app.registry.registerTools({ tools: names.map((name) => ({ name, effect: Effect.READ_ONLY, executor: { case: 'builtin' as const, value: { name: 'echo' } } })) }, ACME);
    await app.dispatch.dispatch({ sessionId: 'acme', calls: names.map((name) => ({ id: name, name, arguments: '{"text":"x"}' })) }, ACME);
    await app.dispatch.dispatch({ sessionId: 'globex', calls: [{ id: 'g', name: 'shout', arguments: '{"text":"x"}' }] }, GLOBEX);
    const m = await app.scrape();
    expect(m.value('dispatch_tool_calls_total', { tenant: 'globex', tool: 'shout', outcome: 'ok' })).toBe(1);
    // acme's quota is 2: its first two tools keep their labels, the 18 others share its overflow pair.
    expect(m.samples.filter((s) => s.name === 'dispatch_tool_calls_total' && s.labels.tenant === 'acme').map((s) => [s.labels.tool, s.value])).toEqual(
      expect.arrayContaining([['t0', 1], ['t1', 1], ['_overflow', 18]]),
    );
    expect(m.samples.filter((s) => s.name === 'dispatch_tool_calls_total' && s.labels.tenant === 'acme')).toHaveLength(3);
    expect(m.samples.filter((s) => s.labels.tenant === '_overflow')).toEqual([]);
    expect(m.value('dispatch_tool_label_overflows_total')).toBe(18);
    expect(m.value('dispatch_tool_rate', { tenant: 'acme', tool: '_overflow', rate: 'timeout' })).toBe(0);
  } finally {
    await app.close();
  }
});

test('a tenant overflow pair takes a pair of the cap; past the cap every new pair is the global _overflow; _shared has the cap alone', () => {
  const pairs = createLabelPairs(4, 1);
  expect(pairs.of('acme', 'a')).toEqual({ labels: { tenant: 'acme', tool: 'a' }, folded: false });
  const acmeOver = pairs.of('acme', 'b');
  expect(acmeOver).toEqual({ labels: { tenant: 'acme', tool: '_overflow' }, folded: true });
  expect(pairs.of('acme', 'c')).toBe(acmeOver);
  expect(pairs.of('acme', 'a').folded).toBe(false);
  expect(pairs.of('', 'x').folded).toBe(false);
  expect(pairs.of('', 'y')).toEqual({ labels: { tenant: '_shared', tool: 'y' }, folded: false });
  // The cap (4) is reached: acme/a, acme/_overflow, _shared/x, _shared/y.
  expect(pairs.of('globex', 'a')).toEqual({ labels: { tenant: '_overflow', tool: '_overflow' }, folded: true });
  expect(pairs.of('acme', 'd')).toBe(acmeOver);
  expect(createLabelPairs(10).of('t', 'a').folded).toBe(false);
  expect(() => createLabelPairs(10, 0)).toThrow('maxLabelPairsPerTenant must be an integer >= 1, got 0');
  expect(() => createLabelPairs(10, 1.5)).toThrow('maxLabelPairsPerTenant must be an integer >= 1, got 1.5');
});

test('telemetry.max_label_pairs_per_tenant: half of max_label_pairs by default, at least 1, checked', () => {
  const settings = (yaml: string) => telemetrySettings(parseConfig(yaml, 'c.yaml'));
  expect(settings('tools: []').maxLabelPairsPerTenant).toBe(500);
  expect(settings('telemetry: { max_label_pairs: 5 }').maxLabelPairsPerTenant).toBe(2);
  expect(settings('telemetry: { max_label_pairs: 0 }').maxLabelPairsPerTenant).toBe(1);
  expect(settings('telemetry: { max_label_pairs_per_tenant: 1000 }').maxLabelPairsPerTenant).toBe(1000);
  expect(() => settings('telemetry: { max_label_pairs_per_tenant: 0 }')).toThrow('c.yaml: telemetry.max_label_pairs_per_tenant: must be an integer >= 1');
});
