// metrics.prometheusRule: a PrometheusRule with GetToolStats' six rate alerts at the seed's
// thresholds (src/telemetry/rate-alerts.ts), and alerts on a lost Redis, an open breaker, lost
// trace spans and turns refused for overload. Off by default; each alert can be tuned or disabled.
// Every expression may name only series docs/metrics.md lists, grouped and matched by labels its
// table gives them (or the target's), and its annotations only labels its result carries.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RATE_COUNTERS } from '../../src/telemetry/call-series';
import { RATE_NAMES, RATE_THRESHOLDS, type ToolRateValues } from '../../src/telemetry/rate-alerts';
import { annotationLabels, documentedSeries, FUNCTIONS, partsOf, TARGET_LABELS } from './promql-check';
import { CHART, FULLNAME, problems, render, renderObjects, useRenderer, valuesFile, type Obj } from './render-chart';

useRenderer({ reuseBuild: true });

interface Rule {
  alert: string;
  expr: string;
  for: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

const ON = 'metrics: {prometheusRule: {enabled: true}}';
const ruleOf = (objects: Obj[]) => objects.find((o) => o.kind === 'PrometheusRule');
const rulesOf = (yaml: string): Rule[] => ruleOf(renderObjects([valuesFile(ON), valuesFile(yaml)]))!.spec.groups.flatMap((g: { rules: Rule[] }) => g.rules);
const refusal = (yaml: string) => {
  const r = render([valuesFile(yaml)]);
  expect(r.status).not.toBe(0);
  return r.stderr;
};

const RATE_KEYS = Object.keys(RATE_NAMES) as (keyof ToolRateValues)[];
const ALERTS = {
  validationFailure: 'DispatchToolValidationFailureRateHigh',
  timeout: 'DispatchToolTimeoutRateHigh',
  retry: 'DispatchToolRetryRateHigh',
  idempotentHit: 'DispatchToolIdempotentHitRateHigh',
  resultBounding: 'DispatchToolResultBoundingRateHigh',
  unexpectedException: 'DispatchToolUnexpectedExceptions',
  error: 'DispatchToolErrorRateHigh',
  breakerOpen: 'DispatchToolBreakerOpen',
  storeDown: 'DispatchStoreDown',
  storeRefusing: 'DispatchStoreRefusing',
  traceSpansDropped: 'DispatchTraceSpansDropped',
  traceExportFailures: 'DispatchTraceExportFailing',
  turnsRefused: 'DispatchTurnsRefused',
};

it('renders no PrometheusRule by default, nor with the ServiceMonitor alone', () => {
  expect(ruleOf(renderObjects([]))).toBeUndefined();
  expect(ruleOf(renderObjects([join(__dirname, 'values-sentinel-tls.yaml')]))).toBeUndefined();
});

describe('enabled', () => {
  let objects: Obj[];
  let rules: Rule[];
  beforeAll(() => {
    objects = renderObjects([valuesFile(ON)]);
    rules = ruleOf(objects)!.spec.groups.flatMap((g: { rules: Rule[] }) => g.rules);
  });

  it('is a valid PrometheusRule in the release namespace with every alert, each with a severity, a summary and a description', () => {
    const rule = ruleOf(objects)!;
    expect(problems([rule])).toEqual([]);
    expect(rule.metadata).toMatchObject({ name: FULLNAME, namespace: 'agents' });
    expect(rules.map((r) => r.alert)).toEqual(Object.values(ALERTS));
    for (const r of rules) {
      expect(r.labels.severity).toMatch(/^(warning|critical)$/);
      expect(r.annotations.summary).toBeTruthy();
      expect(r.annotations.description).toBeTruthy();
    }
  });

  it("computes each of GetToolStats' rates as its counter over dispatch_tool_calls_total per tenant and tool over 5m, above the seed's threshold", () => {
    RATE_KEYS.filter((key) => key !== 'error').forEach((key, i) => {
      const counter = `dispatch_tool_${RATE_COUNTERS[i]![1]}_total`;
      const rule = rules.find((r) => r.alert === ALERTS[key])!;
      expect(rule.expr).toBe(
        `sum by (namespace, tenant, tool) (rate(${counter}{namespace="agents"}[5m])) / sum by (namespace, tenant, tool) (rate(dispatch_tool_calls_total{namespace="agents"}[5m])) > ${RATE_THRESHOLDS[key]}`,
      );
      expect(rule.annotations.summary).toContain(`${RATE_NAMES[key]} rate {{ $value | humanizePercentage }} (threshold ${RATE_THRESHOLDS[key] * 100}%)`);
    });
  });

  // An SRE's probe: calls naming no tool (tool _unknown, 100% errors by construction) kept the
  // alert firing, and a rollout's SHUTTING_DOWN, a client's cancel or deadline counted as the tool's.
  it("computes GetToolStats' error rate as the calls with an outcome other than ok over every call, above half, leaving out the caller's ends and tool _unknown", () => {
    const rule = rules.find((r) => r.alert === ALERTS.error)!;
    expect(rule.expr).toBe(
      'sum by (namespace, tenant, tool) (rate(dispatch_tool_calls_total{namespace="agents", tool!="_unknown", outcome!~"ok|CANCELLED|DEADLINE_EXCEEDED|SHUTTING_DOWN"}[5m])) / sum by (namespace, tenant, tool) (rate(dispatch_tool_calls_total{namespace="agents"}[5m])) > 0.5',
    );
    expect(RATE_THRESHOLDS.error).toBe(0.5);
    expect(rule.annotations.summary).toContain('error rate {{ $value | humanizePercentage }} (threshold 50%)');
    expect(rule.labels.severity).toBe('warning');
  });

  it('alerts on a lost Redis, an open breaker, lost trace spans and turns refused', () => {
    const expr = (alert: string) => rules.find((r) => r.alert === alert)!.expr;
    expect(expr(ALERTS.storeDown)).toBe('dispatch_store_up{namespace="agents"} == 0');
    // A Redis out of memory (noeviction) refuses every write while dispatch_store_up stays 1 (an SRE's probe).
    expect(expr(ALERTS.storeRefusing)).toBe('sum by (namespace, instance) (increase(dispatch_tool_calls_total{namespace="agents", outcome="STORE_UNAVAILABLE"}[5m])) > 0');
    expect(rules.find((r) => r.alert === ALERTS.storeRefusing)!.labels.severity).toBe('critical');
    expect(expr(ALERTS.breakerOpen)).toBe('max by (namespace, tenant, tool) (dispatch_breaker_state{namespace="agents"}) == 2');
    expect(expr(ALERTS.traceSpansDropped)).toBe('increase(dispatch_trace_spans_dropped_total{namespace="agents"}[5m]) > 0');
    expect(expr(ALERTS.traceExportFailures)).toBe('increase(dispatch_trace_export_failures_total{namespace="agents"}[5m]) > 0');
    expect(expr(ALERTS.turnsRefused)).toBe('increase(dispatch_turns_refused_total{namespace="agents"}[5m]) > 0');
    // docs/metrics.md: "Alert on dispatch_store_up == 0 for a minute"; one crash is the seed's alert at once.
    expect(rules.find((r) => r.alert === ALERTS.storeDown)!.for).toBe('1m');
    expect(rules.find((r) => r.alert === ALERTS.unexpectedException)!.for).toBe('0s');
    expect(rules.find((r) => r.alert === ALERTS.timeout)!.for).toBe('5m');
  });

  it('reads the breaker state docs/metrics.md gives for open', () => {
    const docs = readFileSync(join(__dirname, '../../docs/metrics.md'), 'utf8');
    expect(docs).toMatch(/\| `dispatch_breaker_state` \| gauge \| `tenant`, `tool` \| 0 closed, 1 half open, 2 open;/);
  });

  it('names only series docs/metrics.md lists, by labels its table gives them, in well-formed PromQL', () => {
    const series = documentedSeries();
    expect(series.size).toBeGreaterThanOrEqual(20);
    for (const r of rules) {
      const parts = partsOf(r.expr);
      expect({ alert: r.alert, syntax: parts.syntax }).toEqual({ alert: r.alert, syntax: [] });
      expect(parts.metrics.length).toBeGreaterThan(0);
      for (const metric of parts.metrics) {
        expect({ alert: r.alert, metric, documented: series.has(metric) }).toEqual({ alert: r.alert, metric, documented: true });
        const allowed = [...series.get(metric)!, ...TARGET_LABELS];
        for (const label of [...parts.groupedBy.flat(), ...parts.matched]) expect({ alert: r.alert, metric, label, known: allowed.includes(label) }).toEqual({ alert: r.alert, metric, label, known: true });
      }
      expect(parts.functions.filter((f) => !FUNCTIONS.includes(f))).toEqual([]);
      expect(parts.ranges.every((d) => d === '5m')).toBe(true);
    }
  });

  it('that check bites: an undocumented or renamed series, a label the series lacks, a broken form', () => {
    const series = documentedSeries();
    const renamed = partsOf('sum by (tenant) (rate(dispatch_tool_call_duration{namespace=agents}[5 m]) > 0.05');
    expect(renamed.metrics).toEqual(['dispatch_tool_call_duration']);
    expect(series.has('dispatch_tool_call_duration')).toBe(false);
    expect(renamed.syntax).toEqual(['unclosed (', 'not a label matcher: namespace=agents', 'not a duration: [5 m]']);
    expect(partsOf('sum by (outcome) (rate(dispatch_tool_timeouts_total[5m])) > 0').groupedBy).toEqual([['outcome']]);
    expect(series.get('dispatch_tool_timeouts_total')).toEqual(['tenant', 'tool']);
    expect(partsOf('dispatch_store_up == {{ .Values.x }}').syntax).toContain('a template action left in the expression');
  });

  it('names the tool and tenant in every per-tool alert, and only labels its result carries', () => {
    const series = documentedSeries();
    for (const r of rules) {
      const parts = partsOf(r.expr);
      // Grouped, the result has the grouping labels; otherwise the series' own and the target's.
      const carried = parts.groupedBy.length ? parts.groupedBy[0]! : [...parts.metrics.flatMap((m) => series.get(m)!), ...TARGET_LABELS];
      for (const label of annotationLabels(r.annotations)) expect({ alert: r.alert, label, carried: carried.includes(label) }).toEqual({ alert: r.alert, label, carried: true });
      if (carried.includes('tool')) {
        for (const text of [r.annotations.summary, r.annotations.description]) expect(text).toMatch(/\{\{ \$labels\.tool \}\}[\s\S]*\{\{ \$labels\.tenant \}\}/);
      } else {
        expect(r.annotations.summary).toContain('{{ $labels.instance }}');
      }
    }
  });

  it('every alert appears in the chart README', () => {
    const readme = readFileSync(join(CHART, 'README.md'), 'utf8');
    for (const r of rules) expect(readme).toContain(`\`${r.alert}\``);
  });
});

it('takes thresholds, severities and durations from values', () => {
  const rules = rulesOf(`metrics:
  prometheusRule:
    for: 10m
    alerts:
      timeout: {threshold: 0.125, severity: page}
      unexpectedException: {threshold: 0.001}
      storeDown: {for: 2m}
      turnsRefused: {threshold: 3}`);
  const rule = (key: keyof typeof ALERTS) => rules.find((r) => r.alert === ALERTS[key])!;
  expect(rule('timeout').expr).toMatch(/\) > 0\.125$/);
  expect(rule('timeout').labels.severity).toBe('page');
  expect(rule('timeout').annotations.summary).toContain('(threshold 12.5%)');
  expect(rule('timeout').for).toBe('10m');
  expect(rule('unexpectedException').expr).toMatch(/\) > 0\.001$/);
  expect(rule('unexpectedException').for).toBe('0s');
  expect(rule('storeDown').for).toBe('2m');
  expect(rule('turnsRefused').expr).toBe('increase(dispatch_turns_refused_total{namespace="agents"}[5m]) > 3');
  expect(rule('retry').expr).toMatch(/\) > 0\.1$/);
  for (const r of rules) expect(partsOf(r.expr).syntax).toEqual([]);
});

it.each(Object.entries(ALERTS))('disabling %s removes its alert alone', (key, alert) => {
  const rules = rulesOf(`metrics: {prometheusRule: {alerts: {${key}: {enabled: false}}}}`);
  expect(rules.map((r) => r.alert)).toEqual(Object.values(ALERTS).filter((a) => a !== alert));
});

it('takes a namespace, labels and a selector of its own; an empty selector selects by name alone', () => {
  const objects = renderObjects([
    valuesFile(`metrics: {prometheusRule: {enabled: true, namespace: monitoring, additionalLabels: {release: kube-prometheus-stack}, selector: 'namespace="{{ .Release.Namespace }}", service="{{ .Release.Name }}-dispatch-metrics"'}}`),
  ]);
  const rule = ruleOf(objects)!;
  expect(problems([rule])).toEqual([]);
  expect(rule.metadata.namespace).toBe('monitoring');
  expect(rule.metadata.labels).toMatchObject({ release: 'kube-prometheus-stack', 'app.kubernetes.io/instance': 'prod' });
  expect(rule.spec.groups[0].rules.find((r: Rule) => r.alert === ALERTS.storeDown).expr).toBe('dispatch_store_up{namespace="agents", service="prod-dispatch-metrics"} == 0');
  const bare = rulesOf("metrics: {prometheusRule: {selector: ''}}");
  expect(bare.find((r) => r.alert === ALERTS.timeout)!.expr).toBe('sum by (namespace, tenant, tool) (rate(dispatch_tool_timeouts_total[5m])) / sum by (namespace, tenant, tool) (rate(dispatch_tool_calls_total[5m])) > 0.05');
  expect(bare.find((r) => r.alert === ALERTS.error)!.expr).toBe('sum by (namespace, tenant, tool) (rate(dispatch_tool_calls_total{tool!="_unknown", outcome!~"ok|CANCELLED|DEADLINE_EXCEEDED|SHUTTING_DOWN"}[5m])) / sum by (namespace, tenant, tool) (rate(dispatch_tool_calls_total[5m])) > 0.5');
  for (const r of bare) expect(partsOf(r.expr).syntax).toEqual([]);
});

describe('refuses', () => {
  it('the rule without metrics', () => {
    expect(refusal(`metrics: {enabled: false, prometheusRule: {enabled: true}}`)).toContain('metrics.prometheusRule.enabled needs metrics.enabled');
  });

  it('the rule with every alert disabled', () => {
    const off = Object.keys(ALERTS).map((k) => `${k}: {enabled: false}`).join(', ');
    expect(refusal(`metrics: {prometheusRule: {enabled: true, alerts: {${off}}}}`)).toContain('metrics.prometheusRule.enabled with every alert of metrics.prometheusRule.alerts disabled');
  });

  it('a duration Prometheus cannot read, naming the key', () => {
    expect(refusal(`metrics: {prometheusRule: {enabled: true, for: 5 minutes}}`)).toContain('metrics.prometheusRule.for must be a Prometheus duration such as 30s or 1m30s, not "5 minutes"');
    expect(refusal(`metrics: {prometheusRule: {enabled: true, alerts: {storeDown: {for: 1min}}}}`)).toContain('metrics.prometheusRule.alerts.storeDown.for must be a Prometheus duration');
  });

  it('a rate threshold outside 0-1, a misspelt alert, and a threshold on an alert without one', () => {
    expect(refusal('metrics: {prometheusRule: {alerts: {timeout: {threshold: 5}}}}')).toContain('- metrics.prometheusRule.alerts.timeout.threshold: must be <= 1');
    expect(refusal('metrics: {prometheusRule: {alerts: {timeouts: {enabled: false}}}}')).toContain('- metrics.prometheusRule.alerts: Additional property timeouts is not allowed');
    expect(refusal('metrics: {prometheusRule: {alerts: {storeDown: {threshold: 1}}}}')).toContain('- metrics.prometheusRule.alerts.storeDown: Additional property threshold is not allowed');
  });
});
