import { DURATION_BUCKETS_S, RATE_COUNTERS, type OutcomeSeries, type PairSeries } from './call-series';
import type { PairLabels } from './label-pairs';

// The per-call series in the Prometheus text format, written here rather than handed to
// OpenTelemetry's serializer: at the label cap (1,000 pairs, five outcomes each, some 100,000
// lines and 7 MB) the serializer took 420-520 ms in one synchronous run, stalling every call for
// as long on each scrape. The lines are the serializer's, byte for byte (the SDK exporter's
// defaults: scope label `otel_scope_name="dispatch"`, no timestamps), so a scrape reads as before;
// each series' labels are escaped once, and the writing yields to the event loop every
// SLICE_MS.

/** Writing time between two yields to the event loop, in milliseconds. */
export const SLICE_MS = 5;

/** The label every series of the dispatch meter carries, as the SDK exporter adds it. */
const SCOPE_LABEL = 'otel_scope_name="dispatch"';

/** A label value as the Prometheus serializer escapes it. */
const escaped = (value: string) => value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

/** The `tenant` and `tool` labels of a pair, then `more` (`name="value",`) and the scope label, as a scrape writes them. */
export const pairLabelText = (labels: PairLabels, more = '') => `tenant="${escaped(labels.tenant)}",tool="${escaped(labels.tool)}",${more}${SCOPE_LABEL}`;

const pairLabels = (pair: PairSeries) => (pair.labelText ??= pairLabelText(pair.labels));

const outcomeLabels = (o: OutcomeSeries) => (o.labelText ??= pairLabelText(o.pair.labels, `outcome="${escaped(o.outcome)}",`));

const BUCKET_LABELS = [...DURATION_BUCKETS_S.map(String), '+Inf'].map((le) => `,le="${le}"} `);

export const header = (name: string, type: string, help: string, unit?: string) => `# HELP ${name} ${help}\n${unit ? `# UNIT ${name} ${unit}\n` : ''}# TYPE ${name} ${type}\n`;

/** Collects text in slices, each turned to bytes as it ends, yielding to the event loop between them. */
class SlicedText {
  private readonly chunks: Buffer[] = [];
  private text = '';
  private sliceStart = performance.now();

  add(text: string): void {
    this.text += text;
  }

  /** Ends the slice when it has taken SLICE_MS, and lets the event loop run. */
  async pause(): Promise<void> {
    if (performance.now() - this.sliceStart < SLICE_MS) return;
    this.flush();
    await new Promise((resolve) => setImmediate(resolve));
    this.sliceStart = performance.now();
  }

  bytes(): Buffer {
    this.flush();
    return Buffer.concat(this.chunks);
  }

  private flush(): void {
    if (this.text !== '') this.chunks.push(Buffer.from(this.text));
    this.text = '';
  }
}

/** Writes every series of `pairs`, one metric after another, pausing between series. */
async function eachSeries<T>(out: SlicedText, items: readonly T[], line: (item: T) => string): Promise<void> {
  for (const item of items) {
    out.add(line(item));
    await out.pause();
  }
}

function histogram(o: OutcomeSeries): string {
  const labels = outcomeLabels(o);
  let text = `dispatch_tool_call_duration_count{${labels}} ${o.count}\ndispatch_tool_call_duration_sum{${labels}} ${o.sum}\n`;
  let cumulative = 0;
  for (let i = 0; i < o.counts.length; i++) {
    cumulative += o.counts[i]!;
    text += `dispatch_tool_call_duration_bucket{${labels}${BUCKET_LABELS[i]}${cumulative}\n`;
  }
  return text;
}

/**
 * `head`, then the per-call metrics of `pairs` (taken at the start, so every metric shows the same
 * pairs) and the label overflow count, as Prometheus text; the event loop runs every SLICE_MS
 * meanwhile.
 */
export async function callMetricsText(pairs: readonly PairSeries[], overflows: () => number, head: string): Promise<Buffer> {
  const out = new SlicedText();
  out.add(head);
  const outcomes = pairs.flatMap((pair) => [...pair.outcomes.values()]);
  out.add(header('dispatch_tool_calls_total', 'counter', 'Tool calls finished, by tenant, tool and outcome (ok, an error kind, or a hard error reason)'));
  await eachSeries(out, outcomes, (o) => `dispatch_tool_calls_total{${outcomeLabels(o)}} ${o.count}\n`);
  out.add(header('dispatch_tool_attempts_total', 'counter', 'Attempts made, by tenant and tool'));
  await eachSeries(out, pairs, (pair) => `dispatch_tool_attempts_total{${pairLabels(pair)}} ${pair.attempts}\n`);
  out.add(header('dispatch_tool_call_duration', 'histogram', 'Call duration including retries', 's'));
  await eachSeries(out, outcomes, histogram);
  for (let i = 0; i < RATE_COUNTERS.length; i++) {
    const [, name, description] = RATE_COUNTERS[i]!;
    const metric = `dispatch_tool_${name}_total`;
    out.add(header(metric, 'counter', `${description}; divide by dispatch.tool.calls for the rate`));
    await eachSeries(out, pairs, (pair) => `${metric}{${pairLabels(pair)}} ${pair.rates[i]}\n`);
  }
  out.add(header('dispatch_tool_label_overflows_total', 'counter', 'Calls recorded under tenant and tool "_overflow" because their (tenant, tool) pair came past the label cap'));
  out.add(`dispatch_tool_label_overflows_total{${SCOPE_LABEL}} ${overflows()}\n`);
  return out.bytes();
}
