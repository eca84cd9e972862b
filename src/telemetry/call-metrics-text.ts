import { DURATION_BUCKETS_S, DURATION_METRIC, RATE_COUNTERS, type DurationHistogram, type OutcomeSeries, type PairSeries } from './call-series';
import type { PairLabels } from './label-pairs';
import type { SlicedText } from './sliced-text';

// The per-call series in the Prometheus text format, written here rather than handed to
// OpenTelemetry's serializer: at the label cap (1,000 pairs, five outcomes each, some 100,000
// lines and 7 MB) the serializer took 420-520 ms in one synchronous run, stalling every call for
// as long on each scrape. The lines are the serializer's, byte for byte (the SDK exporter's
// defaults: scope label `otel_scope_name="dispatch"`, no timestamps), so a scrape reads as before;
// each series' labels are escaped once, and the writing yields to the event loop every
// SLICE_MS, each slice's text turned to bytes within it (sliced-text.ts).

/** The label every series of the dispatch meter carries, as the SDK exporter adds it. */
const SCOPE_LABEL = 'otel_scope_name="dispatch"';

/** A label value as the Prometheus serializer escapes it. */
export const escaped = (value: string) => value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

/** The `tenant` and `tool` labels of a pair, then `more` (`name="value",`) and the scope label, as a scrape writes them. */
export const pairLabelText = (labels: PairLabels, more = '') => `tenant="${escaped(labels.tenant)}",tool="${escaped(labels.tool)}",${more}${SCOPE_LABEL}`;

const pairLabels = (pair: PairSeries) => (pair.labelText ??= pairLabelText(pair.labels));

const outcomeLabels = (o: OutcomeSeries) => (o.labelText ??= pairLabelText(o.pair.labels, `outcome="${escaped(o.outcome)}",`));

const BUCKET_LABELS = [...DURATION_BUCKETS_S.map(String), '+Inf'].map((le) => `,le="${le}"} `);

export const header = (name: string, type: string, help: string, unit?: string) => `# HELP ${name} ${help}\n${unit ? `# UNIT ${name} ${unit}\n` : ''}# TYPE ${name} ${type}\n`;

/** The `_count`, `_sum` and `_bucket` lines of histogram `metric` with `labels` (a scrape's label text). */
export function histogramText(metric: string, labels: string, h: DurationHistogram): string {
  let text = `${metric}_count{${labels}} ${h.count}\n${metric}_sum{${labels}} ${h.sum}\n`;
  let cumulative = 0;
  for (let i = 0; i < h.counts.length; i++) {
    cumulative += h.counts[i]!;
    text += `${metric}_bucket{${labels}${BUCKET_LABELS[i]}${cumulative}\n`;
  }
  return text;
}

const histogram = (o: OutcomeSeries): string => histogramText(DURATION_METRIC, outcomeLabels(o), o);

/**
 * The per-call metrics of `pairs` (taken at the start, so every metric shows the same pairs) and
 * the label overflow count, as Prometheus text added to `out`; the event loop runs every SLICE_MS
 * meanwhile.
 */
export async function callMetricsText(out: SlicedText, pairs: readonly PairSeries[], overflows: () => number): Promise<void> {
  const outcomes = pairs.flatMap((pair) => [...pair.outcomes.values()]);
  out.add(header('dispatch_tool_calls_total', 'counter', 'Tool calls finished, by tenant, tool and outcome (ok, an error kind, or a hard error reason)'));
  await out.each(outcomes, (o) => `dispatch_tool_calls_total{${outcomeLabels(o)}} ${o.count}\n`);
  out.add(header('dispatch_tool_attempts_total', 'counter', 'Attempts made, by tenant and tool'));
  await out.each(pairs, (pair) => `dispatch_tool_attempts_total{${pairLabels(pair)}} ${pair.attempts}\n`);
  out.add(header(DURATION_METRIC, 'histogram', 'Call duration including retries', 'seconds'));
  await out.each(outcomes, histogram);
  for (let i = 0; i < RATE_COUNTERS.length; i++) {
    const [, name, description] = RATE_COUNTERS[i]!;
    const metric = `dispatch_tool_${name}_total`;
    out.add(header(metric, 'counter', `${description}; divide by dispatch_tool_calls_total, summed over its outcomes, for the rate`));
    await out.each(pairs, (pair) => `${metric}{${pairLabels(pair)}} ${pair.rates[i]}\n`);
  }
  out.add(header('dispatch_tool_label_overflows_total', 'counter', 'Calls recorded under tenant and tool "_overflow" because their (tenant, tool) pair came past the label cap'));
  out.add(`dispatch_tool_label_overflows_total{${SCOPE_LABEL}} ${overflows()}\n`);
}
