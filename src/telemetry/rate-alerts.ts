/** The six operational rates of the dispatch layer (the second seed), as fractions of calls. */
export interface ToolRateValues {
  readonly validationFailure: number;
  readonly timeout: number;
  readonly retry: number;
  readonly idempotentHit: number;
  readonly resultBounding: number;
  readonly unexpectedException: number;
}

/** A rate's name as GetToolStats alerts and the metrics label spell it. */
export const RATE_NAMES: Readonly<Record<keyof ToolRateValues, string>> = {
  validationFailure: 'validation_failure',
  timeout: 'timeout',
  retry: 'retry',
  idempotentHit: 'idempotent_hit',
  resultBounding: 'result_bounding',
  unexpectedException: 'unexpected_exception',
};

/** The seed's alert thresholds: a rate above its threshold is an alert. */
export const RATE_THRESHOLDS: Readonly<Record<keyof ToolRateValues, number>> = {
  validationFailure: 0.15,
  timeout: 0.05,
  retry: 0.1,
  idempotentHit: 0.05,
  resultBounding: 0.2,
  unexpectedException: 0,
};

const percent = (fraction: number) => `${Number((fraction * 100).toFixed(1))}%`;

/** The rates past their thresholds, as `"timeout: 7.5% > 5%"`, in the order of RATE_NAMES. */
export function alertsOf(rates: ToolRateValues): string[] {
  const alerts: string[] = [];
  for (const key of Object.keys(RATE_NAMES) as (keyof ToolRateValues)[]) {
    if (rates[key] > RATE_THRESHOLDS[key]) alerts.push(`${RATE_NAMES[key]}: ${percent(rates[key])} > ${percent(RATE_THRESHOLDS[key])}`);
  }
  return alerts;
}
