/**
 * Each tenant's allowance of event-loop time for checking arguments against schemas that take long
 * to check. One call stops at MAX_CHECK_MS (schema-errors.ts), but a tenant's turn of 16 such calls
 * held the event loop every tenant shares for 16 s (another tenant's echo took 9.6 s, health checks
 * failed for 9 s: a liveness probe restarts the pod). Only a check that looks at the clock (its
 * arguments took more than a few dozen of Ajv's loop turns) is counted, so ordinary calls cost
 * nothing here. A tenant's allowance holds CHECK_BURST_MS and fills again at
 * CHECK_REFILL_MS_PER_SECOND: a tenant may take a second of checking at once and a quarter of the
 * loop for long; past it, its checks that look at the clock stop at once, its calls of a tool whose
 * checks have stopped for their time are refused before any check (checkedCostly), and either
 * call is refused UNAVAILABLE, to call again once the allowance is back (checkingPaused).
 */

/** The most checking time a tenant may take at once, in ms: one call's MAX_CHECK_MS. */
export const CHECK_BURST_MS = 1_000;
/** How fast a tenant's allowance fills again: ms of checking per second. */
export const CHECK_REFILL_MS_PER_SECOND = 250;
/** Tenants remembered (those that spent some of their allowance); past it the oldest are forgotten, full again. */
const MAX_TENANTS = 10_000;

interface Allowance {
  level: number;
  at: number;
}

const allowances = new Map<string, Allowance>();
let current = '';

/**
 * Charges the checks made from now on to `tenant`, until another is named: called just before a
 * schema check (prepareArguments, a policy's modify, a correction), with no await between.
 */
export function chargeChecksTo(tenant: string): void {
  current = tenant;
}

function levelOf(tenant: string, now: number): number {
  const allowance = allowances.get(tenant);
  if (!allowance) return CHECK_BURST_MS;
  const level = Math.min(CHECK_BURST_MS, allowance.level + ((now - allowance.at) * CHECK_REFILL_MS_PER_SECOND) / 1000);
  if (level >= CHECK_BURST_MS) allowances.delete(tenant);
  return level;
}

/** Less than this left of an allowance is none: a check given less stops at its first look, and a costly tool's call is refused before any. */
export const MIN_CHECK_MS = 100;

/** Whether `tenant` has spent its allowance (less than MIN_CHECK_MS left now). Costs a size check, and no clock read, while no tenant has spent any. */
export function allowanceSpent(tenant: string): boolean {
  return allowances.size !== 0 && allowances.has(tenant) && levelOf(tenant, performance.now()) < MIN_CHECK_MS;
}

/** How long the check starting now may take, in ms: what is left of the current tenant's allowance. */
export function checkAllowance(now: number): number {
  const level = levelOf(current, now);
  return level < MIN_CHECK_MS ? 0 : level;
}

/** Charges `ms` of checking, ended at `now`, to the current tenant. */
export function chargeCheck(ms: number, now: number): void {
  const level = levelOf(current, now) - ms;
  allowances.delete(current);
  allowances.set(current, { level, at: now });
  if (allowances.size > MAX_TENANTS) allowances.delete(allowances.keys().next().value!);
}

/** How long until `tenant`'s allowance is full again, in ms (at least 1 s). */
export function untilRefilled(tenant: string, now: number): number {
  return Math.max(1_000, Math.ceil(((CHECK_BURST_MS - levelOf(tenant, now)) * 1000) / CHECK_REFILL_MS_PER_SECOND));
}

/** What a check stopped early for the allowance says of it (added to "checking stopped after N ms"). */
export const ALLOWANCE_SPENT = `this tenant's calls used their allowance of time for checking costly arguments (${CHECK_BURST_MS} ms at once, ${CHECK_REFILL_MS_PER_SECOND} ms more each second)`;
