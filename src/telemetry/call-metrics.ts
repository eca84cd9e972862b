import type { CallSummary } from '../events';
import { callMetricsText } from './call-metrics-text';
import { OutcomeSeries, PairSeries, RATE_COUNTERS } from './call-series';
import { UNKNOWN_TOOL_LABEL, type LabelPairs, type PairLabels } from './label-pairs';
import { SlicedText } from './sliced-text';

export { DURATION_BUCKETS_S } from './call-series';

/** The per-call instruments, counted in place and written at scrape time. */
export interface CallMetrics {
  record(summary: CallSummary): void;
  /** Drops the series of a pair its label pairs forgot (LabelPairs.forget): they leave the scrape. */
  forget(labels: PairLabels): void;
  /** The series as Prometheus text added to `out` (call-metrics-text.ts), and the chunks of `out`; the event loop runs while it is written. */
  prometheusText(out?: SlicedText): Promise<readonly Buffer[]>;
}

/**
 * The per-call metrics: calls by tenant, tool and outcome, the duration histogram, attempts, the
 * six rate counters and the label overflows, with the names, descriptions, buckets and values
 * OpenTelemetry's counters and histogram would give. Recorded through the SDK's instruments they
 * cost ~5 µs per call in a loop (an attribute set sorted and stringified per instrument, for each
 * of three or more instruments) and ~12% of the server's CPU per call under load; here a call is
 * a few increments on objects found by the pair's interned labels. Cumulative from each series'
 * first call, as the SDK's are.
 */
export function createCallMetrics(pairs: LabelPairs): CallMetrics {
  const series = new Map<PairLabels, PairSeries>();
  let overflows = 0;

  return {
    record(s) {
      const { labels, folded } = pairs.of(s.tenant, s.known ? s.tool : UNKNOWN_TOOL_LABEL);
      if (folded) overflows++;
      let pair = series.get(labels);
      if (!pair) series.set(labels, (pair = new PairSeries(labels)));
      pair.attempts += s.attempts;
      for (let i = 0; i < RATE_COUNTERS.length; i++) if (s[RATE_COUNTERS[i]![0]]) pair.rates[i]!++;
      let outcome = pair.outcomes.get(s.outcome);
      if (!outcome) pair.outcomes.set(s.outcome, (outcome = new OutcomeSeries(pair, s.outcome)));
      outcome.record(s.durationMs / 1000);
    },
    forget(labels) {
      series.delete(labels);
    },
    async prometheusText(out = new SlicedText()) {
      await callMetricsText(out, [...series.values()], () => overflows);
      return out.chunks();
    },
  };
}
