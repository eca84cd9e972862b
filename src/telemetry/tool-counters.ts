/** Running counts of one tool's calls. */
export interface ToolCounters {
  calls: number;
  attempts: number;
  validationFailures: number;
  timeouts: number;
  retries: number;
  idempotentHits: number;
  bounded: number;
  unexpected: number;
  /** Calls that ended in an error of any kind. */
  errors: number;
}

/** Zero counts. */
export const emptyCounters = (): ToolCounters => ({ calls: 0, attempts: 0, validationFailures: 0, timeouts: 0, retries: 0, idempotentHits: 0, bounded: 0, unexpected: 0, errors: 0 });

/** Adds `from` into `into` (a new zero when undefined) and returns it. */
export function addCounters(into: ToolCounters | undefined, from: Readonly<ToolCounters>): ToolCounters {
  const sum = into ?? emptyCounters();
  for (const key of Object.keys(sum) as (keyof ToolCounters)[]) sum[key] += from[key];
  return sum;
}
