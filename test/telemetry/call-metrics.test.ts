import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import type { CallSummary } from '../../src/events';
import { createCallMetrics, DURATION_BUCKETS_S } from '../../src/telemetry/call-metrics';
import { createLabelPairs, UNKNOWN_TOOL_LABEL } from '../../src/telemetry/label-pairs';

const call = (over: Partial<CallSummary>): CallSummary => ({
  tenant: 'acme',
  tool: 'weather',
  known: true,
  outcome: 'ok',
  attempts: 1,
  durationMs: 3,
  validationFailed: false,
  timedOut: false,
  retried: false,
  idempotentHit: false,
  bounded: false,
  unexpected: false,
  ...over,
});

/** Calls of every shape: outcomes, flags, durations on and between bucket bounds, unknown tools, pairs past the cap. */
const CALLS: CallSummary[] = [
  call({}),
  call({ durationMs: 5 }),
  call({ durationMs: 5.0001, attempts: 2, retried: true }),
  call({ outcome: 'INVALID_ARGUMENTS', validationFailed: true, durationMs: 0 }),
  call({ tool: 'slow', outcome: 'TIMEOUT', timedOut: true, attempts: 3, retried: true, durationMs: 30_000 }),
  call({ tool: 'send', idempotentHit: true, durationMs: 999_999 }),
  call({ tool: 'big', bounded: true, durationMs: 250 }),
  call({ tool: 'crashy', outcome: 'UNEXPECTED', unexpected: true, durationMs: 12.5 }),
  call({ tool: 'nope', known: false, outcome: 'UNKNOWN_TOOL', attempts: 0, durationMs: 0.2 }),
  call({ tenant: '', tool: 'shared' }),
  call({ tenant: 'globex' }),
  call({ tenant: 'we"ird\\ten\nant' }),
  call({ tenant: 'initech', tool: 'late' }),
  call({ tenant: 'initech', tool: 'later', outcome: 'TIMEOUT', timedOut: true }),
];

/** What the SDK's own instruments give for the same calls: the way dispatch recorded them before. */
async function throughSdk(calls: CallSummary[], maxPairs: number): Promise<string> {
  const pairs = createLabelPairs(maxPairs);
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const meter = new MeterProvider({ readers: [exporter] }).getMeter('dispatch');
  const calls_ = meter.createCounter('dispatch.tool.calls', { description: 'Tool calls finished, by tenant, tool and outcome (ok, an error kind, or a hard error reason)' });
  const attempts = meter.createCounter('dispatch.tool.attempts', { description: 'Attempts made, by tenant and tool' });
  const duration = meter.createHistogram('dispatch.tool.call.duration_seconds', { description: 'Call duration including retries', unit: 'seconds', advice: { explicitBucketBoundaries: DURATION_BUCKETS_S } });
  const rate = (name: string, description: string) => meter.createCounter(`dispatch.tool.${name}`, { description: `${description}; divide by dispatch_tool_calls_total, summed over its outcomes, for the rate` });
  const events = {
    validationFailed: rate('validation_failures', 'Calls refused for invalid arguments'),
    timedOut: rate('timeouts', 'Calls with an attempt that timed out'),
    retried: rate('retries', 'Calls retried at least once'),
    idempotentHit: rate('idempotent_hits', 'Calls answered from an idempotency record'),
    bounded: rate('bounded_results', 'Calls whose result was cut by the dispatch layer'),
    unexpected: rate('unexpected_exceptions', 'Calls with an attempt that crashed or broke the tool contract'),
  } as const;
  const overflows = meter.createCounter('dispatch.tool.label_overflows', { description: 'Calls recorded under tenant and tool "_overflow" because their (tenant, tool) pair came past the label cap' });
  overflows.add(0);
  const seen = new Set<object>();
  for (const s of calls) {
    const { labels, folded } = pairs.of(s.tenant, s.known ? s.tool : UNKNOWN_TOOL_LABEL);
    if (folded) overflows.add(1);
    const byOutcome = { ...labels, outcome: s.outcome };
    calls_.add(1, byOutcome);
    duration.record(s.durationMs / 1000, byOutcome);
    attempts.add(s.attempts, labels);
    const first = !seen.has(labels) && seen.add(labels) !== undefined;
    for (const key of Object.keys(events) as (keyof typeof events)[]) {
      if (s[key]) events[key].add(1, labels);
      else if (first) events[key].add(0, labels);
    }
  }
  const { resourceMetrics } = await exporter.collect();
  // As the exporter serializes: with the scope label, without target_info (which dispatch's own text leaves to the SDK's part).
  return new PrometheusSerializer(undefined, false, undefined, true, false).serialize(resourceMetrics);
}

async function throughCallMetrics(calls: CallSummary[], maxPairs: number): Promise<string> {
  const metrics = createCallMetrics(createLabelPairs(maxPairs));
  for (const s of calls) metrics.record(s);
  return Buffer.concat(await metrics.prometheusText()).toString();
}

/** The exposition's lines, sorted: series order within a metric is not part of the format. */
const lines = (text: string) => text.split('\n').filter((l) => l !== '').sort();

/** Each metric's block (from its HELP line) with its lines sorted: a metric's samples must stay together. */
const blocks = (text: string) => text.split(/^(?=# HELP )/m).map((block) => lines(block).join('\n'));

test.each([
  ['under the label cap', 1000],
  ['with pairs folded past a cap of 3', 3],
])('the per-call series are exactly what the SDK instruments give, %s', async (_name, maxPairs) => {
  const ours = await throughCallMetrics(CALLS, maxPairs);
  expect(blocks(ours)).toEqual(blocks(await throughSdk(CALLS, maxPairs)));
  expect(ours).toContain('dispatch_tool_call_duration_seconds_bucket{tenant="acme",tool="weather",outcome="ok",otel_scope_name="dispatch",le="0.005"} 2');
  if (maxPairs === 3) expect(ours).toMatch(/dispatch_tool_label_overflows_total\{otel_scope_name="dispatch"\} \d+/);
});

test('nothing recorded: only the overflow counter, at 0', async () => {
  const text = await throughCallMetrics([], 10);
  expect(lines(text).filter((l) => !l.startsWith('#'))).toEqual(['dispatch_tool_label_overflows_total{otel_scope_name="dispatch"} 0']);
});
