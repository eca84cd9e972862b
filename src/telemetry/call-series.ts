import type { CallSummary } from '../events';
import type { PairLabels } from './label-pairs';

/**
 * The call duration histogram's name: its unit as the suffix, as Prometheus names go (and
 * OpenMetrics requires of a metric with a `# UNIT` line); its series add `_bucket`, `_sum`, `_count`.
 */
export const DURATION_METRIC = 'dispatch_tool_call_duration_seconds';

/** Upper bounds of the call duration histogram, in seconds (inclusive, as OpenTelemetry's). */
export const DURATION_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** The six rate counters: the summary flag each counts, its metric name and description. */
export const RATE_COUNTERS = [
  ['validationFailed', 'validation_failures', 'Calls refused for invalid arguments'],
  ['timedOut', 'timeouts', 'Calls with an attempt that timed out'],
  ['retried', 'retries', 'Calls retried at least once'],
  ['idempotentHit', 'idempotent_hits', 'Calls answered from an idempotency record'],
  ['bounded', 'bounded_results', 'Calls whose result was cut by the dispatch layer'],
  ['unexpected', 'unexpected_exceptions', 'Calls with an attempt that crashed or broke the tool contract'],
] as const satisfies readonly (readonly [keyof CallSummary, string, string])[];

/** A duration histogram over {@link DURATION_BUCKETS_S}, as OpenTelemetry's would count it. */
export class DurationHistogram {
  count = 0;
  sum = 0;
  /** Observations per bucket of {@link DURATION_BUCKETS_S}, the last past them all. */
  readonly counts: number[] = new Array<number>(DURATION_BUCKETS_S.length + 1).fill(0);

  record(seconds: number): void {
    this.count++;
    this.sum += seconds;
    let bucket = 0;
    while (bucket < DURATION_BUCKETS_S.length && DURATION_BUCKETS_S[bucket]! < seconds) bucket++;
    this.counts[bucket]!++;
  }
}

/** One outcome of one (tenant, tool) pair: its call count and duration histogram. */
export class OutcomeSeries extends DurationHistogram {
  /** Its labels as a scrape writes them, made on the first scrape (see call-metrics-text.ts). */
  labelText: string | undefined;

  constructor(
    readonly pair: PairSeries,
    readonly outcome: string,
  ) {
    super();
  }
}

/** The series of one (tenant, tool) pair. */
export class PairSeries {
  attempts = 0;
  readonly rates: number[] = RATE_COUNTERS.map(() => 0);
  readonly outcomes = new Map<string, OutcomeSeries>();
  /** Its labels as a scrape writes them, made on the first scrape (see call-metrics-text.ts). */
  labelText: string | undefined;

  constructor(readonly labels: PairLabels) {}
}
