/** The six operational rates of the dispatch layer (the second seed), and the error rate, as fractions of calls. */
export interface ToolRateValues {
  readonly validationFailure: number;
  readonly timeout: number;
  readonly retry: number;
  readonly idempotentHit: number;
  readonly resultBounding: number;
  readonly unexpectedException: number;
  /** Not one of the six: calls that ended in an error of any kind. */
  readonly error: number;
}

/** A rate's name as GetToolStats alerts and the metrics label spell it. */
export const RATE_NAMES: Readonly<Record<keyof ToolRateValues, string>> = {
  validationFailure: 'validation_failure',
  timeout: 'timeout',
  retry: 'retry',
  idempotentHit: 'idempotent_hit',
  resultBounding: 'result_bounding',
  unexpectedException: 'unexpected_exception',
  error: 'error',
};

/** The seed's alert thresholds (`error`'s is dispatch's own): a rate above its threshold is an alert. */
export const RATE_THRESHOLDS: Readonly<Record<keyof ToolRateValues, number>> = {
  validationFailure: 0.15,
  timeout: 0.05,
  retry: 0.1,
  idempotentHit: 0.05,
  resultBounding: 0.2,
  unexpectedException: 0,
  error: 0.5,
};

const percent = (fraction: number, digits: number) => Number((fraction * 100).toFixed(digits));

/** Decimals tried at most for a rate just past its threshold; past them the rate is shown in full. */
const MAX_DIGITS = 12;

/**
 * A rate above `threshold` as a percentage: one decimal, or as many more as it takes for the shown
 * rate to be above the shown threshold (1 call in 2,001 past 0% is `0.05%`, not `0%`).
 */
export function ratePastThreshold(rate: number, threshold: number): string {
  const limit = percent(threshold, MAX_DIGITS);
  for (let digits = 1; digits <= MAX_DIGITS; digits++) {
    const shown = percent(rate, digits);
    if (shown > limit) return `${shown}%`;
  }
  return `${rate * 100}%`;
}

/** The rates past their thresholds, as `"timeout: 7.5% > 5%"`, in the order of RATE_NAMES. */
export function alertsOf(rates: ToolRateValues): string[] {
  const alerts: string[] = [];
  for (const key of Object.keys(RATE_NAMES) as (keyof ToolRateValues)[]) {
    const threshold = RATE_THRESHOLDS[key];
    if (rates[key] > threshold) alerts.push(`${RATE_NAMES[key]}: ${ratePastThreshold(rates[key], threshold)} > ${percent(threshold, MAX_DIGITS)}%`);
  }
  return alerts;
}
