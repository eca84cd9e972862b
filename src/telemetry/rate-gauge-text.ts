import { header, pairLabelText } from './call-metrics-text';
import type { LabelPairs, PairLabels } from './label-pairs';
import { RATE_NAMES } from './rate-alerts';
import type { SlicedText } from './sliced-text';
import { addCounters, ratesOf, type ToolCounters, type ToolStats } from './tool-stats';

/**
 * The seed's six: the error rate is left out (it is dispatch_tool_calls_total by outcome, which
 * Prometheus divides as well), so each pair has six series here, not seven.
 */
const RATE_KEYS = (Object.keys(RATE_NAMES) as (keyof typeof RATE_NAMES)[]).filter((key) => key !== 'error');

/**
 * `dispatch_tool_rate`, the six operational rates per tenant and tool over the recent window
 * (`stats.window`: a tool's past problems leave it, a new one shows), as Prometheus
 * text. Written here as the per-call series are (call-metrics-text.ts): through an SDK observable
 * gauge its 6,000 observations at the label cap were hashed attribute set by attribute set, ~100
 * ms of one synchronous collection per scrape, and past the SDK's 2,000 attribute sets per
 * instrument the rest went to one `otel_metric_overflow` series. Folded pairs share one labels object, so their
 * counts are summed before the rates. Added to `out` in its slices, the event loop running between them.
 */
export async function rateGaugeText(out: SlicedText, stats: ToolStats, pairs: LabelPairs): Promise<void> {
  const sums = new Map<PairLabels, ToolCounters>();
  for (const { tenant, tool } of stats.pairs()) {
    const { labels } = pairs.of(tenant, tool);
    sums.set(labels, addCounters(sums.get(labels), stats.recent(tenant, tool)));
    await out.pause();
  }
  out.add(header('dispatch_tool_rate', 'gauge', `The six operational rates per tenant and tool over the last ${stats.window.seconds} s (fraction of the calls in them)`));
  await out.each(sums, ([labels, counters]) => {
    const rates = ratesOf(counters);
    let text = '';
    for (const key of RATE_KEYS) text += `dispatch_tool_rate{${pairLabelText(labels, `rate="${RATE_NAMES[key]}",`)}} ${rates[key]}\n`;
    return text;
  });
}
