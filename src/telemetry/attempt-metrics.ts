import type { AttemptSink } from '../events';
import { escaped, header, histogramText, pairLabelText } from './call-metrics-text';
import { DurationHistogram } from './call-series';
import type { LabelPairs, PairLabels } from './label-pairs';
import type { SlicedText } from './sliced-text';

/** Attempts ended, by tenant, tool, outcome and retry. */
export const ATTEMPT_OUTCOMES_METRIC = 'dispatch_tool_attempt_outcomes_total';

/** How long the executor ran each attempt that reached its tool, by tenant and tool. */
export const ATTEMPT_DURATION_METRIC = 'dispatch_tool_attempt_duration_seconds';

/** The attempts of one (tenant, tool) pair that ended with one outcome, first attempts or retries. */
class AttemptCount {
  count = 0;
  /** Its labels as a scrape writes them, made on the first scrape. */
  labelText: string | undefined;

  constructor(
    readonly labels: PairLabels,
    readonly outcome: string,
    readonly retry: boolean,
  ) {}
}

/** The attempt series of one (tenant, tool) pair. */
class AttemptPair {
  /** By outcome: the calls' first attempts, and their retries. */
  readonly first = new Map<string, AttemptCount>();
  readonly retries = new Map<string, AttemptCount>();
  /** Made at the pair's first attempt that ran its tool. */
  duration: DurationHistogram | undefined;
  labelText: string | undefined;

  constructor(readonly labels: PairLabels) {}
}

/** The per-attempt series, counted in place and written at scrape time (as call-metrics.ts does the per-call ones). */
export interface AttemptMetrics {
  readonly record: AttemptSink;
  /** Drops the series of a pair its label pairs forgot (LabelPairs.forget). */
  forget(labels: PairLabels): void;
  /** The series as Prometheus text added to `out`; nothing until an attempt ended. */
  prometheusText(out: SlicedText): Promise<void>;
}

/**
 * Attempts by tenant, tool, outcome and retry, and the executor's time per attempt. The tool is
 * the one the model asked for, as every per-call series and `dispatch_tool_attempts_total` count
 * it (docs/metrics.md: a fallback's attempt counts under the tool asked for; summed over outcome
 * and retry, this is that counter), always a registered tool: a name no tool has never begins an
 * attempt (its call counts under `_unknown`).
 * The pairs are `pairs`, the per-call series' own, so the label cap bounds both; an attempt of a
 * folded pair counts under its overflow pair (not in `dispatch_tool_label_overflows_total`, which
 * counts calls). An attempt costs a few map reads and increments, no allocation once its series exist.
 */
export function createAttemptMetrics(pairs: LabelPairs): AttemptMetrics {
  const series = new Map<PairLabels, AttemptPair>();
  return {
    record(tenant, tool, outcome, retry, ranMs) {
      const { labels } = pairs.of(tenant, tool);
      let pair = series.get(labels);
      if (!pair) series.set(labels, (pair = new AttemptPair(labels)));
      const byOutcome = retry ? pair.retries : pair.first;
      let counted = byOutcome.get(outcome);
      if (!counted) byOutcome.set(outcome, (counted = new AttemptCount(labels, outcome, retry)));
      counted.count++;
      if (ranMs !== undefined) (pair.duration ??= new DurationHistogram()).record(ranMs / 1000);
    },
    forget(labels) {
      series.delete(labels);
    },
    async prometheusText(out) {
      const all = [...series.values()];
      if (all.length === 0) return;
      const counts = all.flatMap((pair) => [...pair.first.values(), ...pair.retries.values()]);
      out.add(header(ATTEMPT_OUTCOMES_METRIC, 'counter', "Attempts ended, by tenant, tool (the tool the model asked for, a fallback's attempts included), outcome (ok, an error kind, or the hard error that cut it off) and retry (true for a call's attempts after its first)"));
      await out.each(counts, (c) => `${ATTEMPT_OUTCOMES_METRIC}{${(c.labelText ??= pairLabelText(c.labels, `outcome="${escaped(c.outcome)}",retry="${c.retry}",`))}} ${c.count}\n`);
      const ran = all.filter((pair) => pair.duration !== undefined);
      out.add(header(ATTEMPT_DURATION_METRIC, 'histogram', 'How long the executor ran each attempt that reached its tool (memo hits, replays and refusals left out): without the retry backoff and the hook, approval, store, slot and rate waits of dispatch_tool_call_duration_seconds', 'seconds'));
      await out.each(ran, (pair) => histogramText(ATTEMPT_DURATION_METRIC, (pair.labelText ??= pairLabelText(pair.labels)), pair.duration!));
    },
  };
}
