import type { CallSummary } from '../events';
import { OUTCOME_OK } from '../events/span-attributes';
import { checkInteger } from '../options';
import type { LiveTool } from './label-pairs';
import type { ToolRateValues } from './rate-alerts';
import { rateWindow, WindowCounts, type RateWindow } from './rate-window';
import { addCounters, emptyCounters, type ToolCounters } from './tool-counters';

export { addCounters, emptyCounters, type ToolCounters } from './tool-counters';

/** Per-tenant, per-tool call counts behind GetToolStats and the rate gauges. */
export interface ToolStats {
  /** Counts a finished call of a known tool; unknown names are not counted. */
  record(summary: CallSummary): void;
  /** The counts of a tenant's tool, or undefined if it has none. */
  get(tenant: string, tool: string): Readonly<ToolCounters> | undefined;
  /** The counts of a tenant's tool over the recent window (zeros when none), what its rates are of. */
  recent(tenant: string, tool: string): ToolCounters;
  /** The window {@link recent} covers. */
  readonly window: RateWindow;
  /** Tools with counts for a tenant. */
  tools(tenant: string): string[];
  /** Counts per tool summed over tenants. */
  totals(): Map<string, ToolCounters>;
  /** Every tracked (tenant, tool) pair with its counts, for the per-tenant rate gauges. */
  pairs(): IterableIterator<TenantToolCounters>;
  /**
   * Drops a removed tool's counts: its place counts for another tool, and the name registered again
   * starts at zero. Without `tool`, every tool's of the tenant (EraseTenant).
   */
  forget(tenant: string, tool?: string): void;
}

/** One (tenant, tool) pair's counts, as {@link ToolStats.pairs} yields them. */
export interface TenantToolCounters {
  readonly tenant: string;
  readonly tool: string;
  readonly counters: Readonly<ToolCounters>;
}

/** Options of {@link createToolStats}. */
export interface ToolStatsOptions {
  /** (tenant, tool) pairs tracked in all; calls of further pairs are not counted. @default 10000 */
  readonly maxTracked?: number;
  /**
   * Tools tracked per tenant; calls of a tenant's further tools are not counted, so one tenant's
   * calls cannot fill the table that every tenant's GetToolStats reads. @default a tenth of
   * `maxTracked`, at least 1 (1000)
   */
  readonly maxTrackedPerTenant?: number;
  /** The recent window the rates cover. @default rateWindow(): the last 900 s */
  readonly window?: RateWindow;
  /** Whether a pair's tool is registered now, asked when a call would add the pair (countCall). @default every tool is */
  readonly live?: LiveTool;
}

/** {@link ToolStatsOptions.maxTracked}'s default. */
export const DEFAULT_MAX_TRACKED = 10_000;
/** The pairs one tenant may hold of `max` (a tenth, at least 1), here and while counts wait for Redis. */
export const tenantShare = (max: number): number => Math.max(1, Math.floor(max / 10));

/** Counts per tenant, then per tool. */
export type CountersTable = Map<string, Map<string, ToolCounters>>;

/** What {@link countCall} did with a call. */
export type CountResult = 'counted' | 'added' | 'dropped';

/**
 * Counts a finished call into `table`: into its pair's counts (`counted`), or into a new pair's
 * when `mayAdd` and its tool is registered now (`live`, asked only then: a call that ended after
 * its tool's removal must not bring back the counts that went with it) (`added`); else the call is
 * not counted (`dropped`).
 */
export function countCall(table: CountersTable, s: CallSummary, mayAdd: boolean, live?: LiveTool): CountResult {
  let tools = table.get(s.tenant);
  let c = tools?.get(s.tool);
  let result: CountResult = 'counted';
  if (!c) {
    if (!mayAdd || (live && !live(s.tenant, s.tool))) return 'dropped';
    if (!tools) table.set(s.tenant, (tools = new Map()));
    tools.set(s.tool, (c = emptyCounters()));
    result = 'added';
  }
  addCall(c, s);
  return result;
}

/** Adds one finished call to `c`. */
export function addCall(c: ToolCounters, s: CallSummary): void {
  c.calls++;
  c.attempts += s.attempts;
  if (s.validationFailed) c.validationFailures++;
  if (s.timedOut) c.timeouts++;
  if (s.retried) c.retries++;
  if (s.idempotentHit) c.idempotentHits++;
  if (s.bounded) c.bounded++;
  if (s.unexpected) c.unexpected++;
  if (s.outcome !== OUTCOME_OK) c.errors++;
}

/** The six rates and the error rate of a tool's counts, each a fraction of its calls (0 with no calls). */
export function ratesOf(counters: Readonly<ToolCounters> | undefined): ToolRateValues {
  const calls = counters?.calls ?? 0;
  const of = (n: number) => (calls === 0 ? 0 : n / calls);
  return {
    validationFailure: of(counters?.validationFailures ?? 0),
    timeout: of(counters?.timeouts ?? 0),
    retry: of(counters?.retries ?? 0),
    idempotentHit: of(counters?.idempotentHits ?? 0),
    resultBounding: of(counters?.bounded ?? 0),
    unexpectedException: of(counters?.unexpected ?? 0),
    error: of(counters?.errors ?? 0),
  };
}


/**
 * Creates an empty table. A pair is tracked from its first call while its tenant has fewer than
 * `maxTrackedPerTenant` tools and the table fewer than `maxTracked` pairs, and then until its tool
 * is removed ({@link ToolStats.forget}) or the process ends.
 */
export function createToolStats(options: ToolStatsOptions = {}): ToolStats {
  const maxTracked = checkInteger('maxTracked', options.maxTracked ?? DEFAULT_MAX_TRACKED, {}, String);
  const maxPerTenant = checkInteger('maxTrackedPerTenant', options.maxTrackedPerTenant ?? tenantShare(maxTracked), {}, String);
  const window = options.window ?? rateWindow();
  const byTenant: CountersTable = new Map();
  // A pair's recent counts, by its all-time counts (dropped with them when its tool is forgotten).
  const recent = new WeakMap<ToolCounters, WindowCounts>();
  let tracked = 0;
  return {
    window,
    record(s) {
      if (!s.known) return;
      const mayAdd = tracked < maxTracked && (byTenant.get(s.tenant)?.size ?? 0) < maxPerTenant;
      const result = countCall(byTenant, s, mayAdd, options.live);
      if (result === 'dropped') return;
      if (result === 'added') tracked++;
      const total = byTenant.get(s.tenant)!.get(s.tool)!;
      let buckets = recent.get(total);
      if (!buckets) recent.set(total, (buckets = new WindowCounts(window)));
      addCall(buckets.current(), s);
    },
    get: (tenant, tool) => byTenant.get(tenant)?.get(tool),
    recent(tenant, tool) {
      const total = byTenant.get(tenant)?.get(tool);
      const buckets = total && recent.get(total);
      return buckets ? buckets.sumInto(emptyCounters()) : emptyCounters();
    },
    tools: (tenant) => [...(byTenant.get(tenant)?.keys() ?? [])],
    totals() {
      const out = new Map<string, ToolCounters>();
      for (const tools of byTenant.values()) {
        for (const [tool, c] of tools) out.set(tool, addCounters(out.get(tool), c));
      }
      return out;
    },
    *pairs() {
      for (const [tenant, tools] of byTenant) {
        for (const [tool, counters] of tools) yield { tenant, tool, counters };
      }
    },
    forget(tenant, tool) {
      const tools = byTenant.get(tenant);
      if (tool === undefined) {
        tracked -= tools?.size ?? 0;
        byTenant.delete(tenant);
        return;
      }
      if (!tools?.delete(tool)) return;
      tracked--;
      if (tools.size === 0) byTenant.delete(tenant);
    },
  };
}

/** How far an answer's counts reach: every replica sharing Redis, or the replica that answered. */
export type StatsScope = 'service' | 'replica';

/** A tenant's counts per tool, as GetToolStats answers them. */
export interface TenantCounts {
  /** Every call counted, per tool. */
  readonly tools: ReadonlyMap<string, Readonly<ToolCounters>>;
  /** The calls of the recent window per tool (the window of the stats read); a tool left out has none. */
  readonly recent: ReadonlyMap<string, Readonly<ToolCounters>>;
  readonly scope: StatsScope;
  /** Why the counts reach less far than they should (the shared counts were unreachable). */
  readonly warning?: string;
}

/** Where GetToolStats reads a tenant's counts. */
export interface ToolStatsReader {
  /** A tenant's counts: every tool's, or with `tool` at least that one's (a shared read then fetches only its). */
  read(tenant: string, tool?: string): Promise<TenantCounts>;
}

/** A tenant's counts in this replica's table, all-time and recent. */
export function tenantCounts(stats: ToolStats, tenant: string): Pick<TenantCounts, 'tools' | 'recent'> {
  const names = stats.tools(tenant);
  return { tools: new Map(names.map((tool) => [tool, stats.get(tenant, tool)!])), recent: new Map(names.map((tool) => [tool, stats.recent(tenant, tool)])) };
}

/** Reads this replica's table alone: the answer of a dispatch without Redis. */
export function localStatsReader(stats: ToolStats): ToolStatsReader {
  return { read: async (tenant) => ({ ...tenantCounts(stats, tenant), scope: 'replica' }) };
}
