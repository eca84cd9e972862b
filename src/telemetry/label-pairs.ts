import type { Attributes } from '@opentelemetry/api';

/** The tool label of calls whose name matched no tool, so invented names cannot grow the series. */
export const UNKNOWN_TOOL_LABEL = '_unknown';

/**
 * The tenant label of a config-file tool's breaker (its key names no tenant, as every tenant
 * shares it), and of any other series whose tenant is `''`. An explicit value rather than `''`,
 * which Prometheus would show as no tenant label at all.
 */
export const SHARED_TENANT_LABEL = '_shared';

/**
 * The tool label of a tenant's pairs past its quota (`tenant="<t>", tool="_overflow"`), and the
 * tenant and tool label of every pair that came after the cap was reached.
 */
export const OVERFLOW_LABEL = '_overflow';

/**
 * Distinct (tenant, tool) label pairs the per-tool series carry; later pairs share the
 * {@link OVERFLOW_LABEL} pair. A pair is 13 series (attempts, six rate counters, six rate gauges;
 * a breaker, slot and rate-limit series besides where it has them) plus 18 per outcome seen (a
 * count and the 17 lines of the duration histogram), so this bounds the per-tool series at some
 * 31,000 with one outcome per pair, ~103,000 with five (a scrape of 12 MB).
 */
export const DEFAULT_MAX_LABEL_PAIRS = 1000;

/**
 * The pairs one tenant may hold of `max` label pairs by default with authentication configured:
 * half, at least 1 (500), so one tenant cannot take them all. Without authentication the one
 * tenant (`default`) may hold all of them (see telemetrySettings).
 */
export const labelPairsPerTenant = (max: number): number => Math.max(1, Math.floor(max / 2));

/** The `tenant` and `tool` labels of one series. */
export interface PairLabels extends Attributes {
  readonly tenant: string;
  readonly tool: string;
}

/** What {@link LabelPairs.of} returns: the same frozen object every time for a pair. */
export interface LabelPair {
  readonly labels: PairLabels;
  /** True when the pair came past a bound and `labels` is an overflow pair. */
  readonly folded: boolean;
}

/** Hands out the labels of (tenant, tool) pairs, admitting pairs until the cap. */
export interface LabelPairs {
  /** `tenant` as the caller's tenant or a breaker key's (`''` for a shared tool), `tool` as labelled. */
  of(tenant: string, tool: string): LabelPair;
  /**
   * Drops the pair of a removed tool: the labels it held, whose series go with it and whose place
   * in the cap and in its tenant's quota is given back; undefined when it held none (never seen,
   * folded into an overflow pair, whose counts keep its calls, or a `_shared` pair, never dropped).
   */
  forget(tenant: string, tool: string): PairLabels | undefined;
  /**
   * Drops every pair of an erased tenant (EraseTenant), its overflow pair too: the labels they held,
   * whose series go with them and whose places in the cap are given back.
   */
  forgetTenant(tenant: string): PairLabels[];
}

/** Whether a (tenant, tool) pair's tool is registered now; asked only when a pair is first seen. */
export type LiveTool = (tenant: string, tool: string) => boolean;

const FOLDED: LabelPair = Object.freeze({ labels: Object.freeze({ tenant: OVERFLOW_LABEL, tool: OVERFLOW_LABEL }), folded: true });

const pairOf = (tenant: string, tool: string, folded: boolean): LabelPair => Object.freeze({ labels: Object.freeze({ tenant: tenant === '' ? SHARED_TENANT_LABEL : tenant, tool }), folded });

/** A tenant's pairs: those with labels of their own, and the tools folded into an overflow pair. */
interface TenantPairs {
  /** By tool, every pair handed out: its own labels, or the overflow pair it was folded into. */
  readonly pairs: Map<string, LabelPair>;
  /** How many of `pairs` have labels of their own (the tenant's quota bounds these). */
  own: number;
  overflow?: LabelPair;
}

/**
 * Label pairs capped at `max` in all (0 folds every pair) and at `maxPerTenant` per tenant, so one
 * tenant calling or registering thousands of tools cannot take every pair and push the others'
 * series into overflow. A tenant's pairs past its quota share `tenant="<t>", tool="_overflow"`,
 * which takes a pair of the cap too (for as long as the process runs); once the cap is reached,
 * new pairs (and a tenant's overflow pair) share the global `_overflow` pair. The `_shared` pairs
 * (config-file tools' breakers, set by the operator) have the cap alone and are never forgotten.
 *
 * A removed tool's pair is forgotten ({@link LabelPairs.forget}): a later pair takes its place.
 * A folded pair stays folded until its tool is removed, even once there is room, so that its
 * calls are not split between the overflow pair and labels of its own; it frees nothing when
 * forgotten. With `live`, a pair first seen for a tool not registered now (a call that ended
 * after its tool was removed) counts under its tenant's `_unknown` pair instead, so that it does
 * not take a pair no removal would free. A RangeError when either bound is not an integer (`max`
 * >= 0, `maxPerTenant` >= 1).
 */
export function createLabelPairs(max: number = DEFAULT_MAX_LABEL_PAIRS, maxPerTenant: number = labelPairsPerTenant(max), live?: LiveTool): LabelPairs {
  if (!Number.isInteger(max) || max < 0) throw new RangeError(`maxLabelPairs must be an integer >= 0, got ${String(max)}`);
  if (!Number.isInteger(maxPerTenant) || maxPerTenant < 1) throw new RangeError(`maxLabelPairsPerTenant must be an integer >= 1, got ${String(maxPerTenant)}`);
  const byTenant = new Map<string, TenantPairs>();
  let admitted = 0;

  /** The pair a first-seen (tenant, tool) gets: labels of its own while both bounds allow. */
  function admit(held: TenantPairs, tenant: string, tool: string): LabelPair {
    if (tenant !== '' && held.own >= maxPerTenant) {
      if (held.overflow) return held.overflow;
      if (admitted >= max) return FOLDED;
      admitted++;
      return (held.overflow = pairOf(tenant, OVERFLOW_LABEL, true));
    }
    if (admitted >= max) return FOLDED;
    admitted++;
    held.own++;
    return pairOf(tenant, tool, false);
  }

  const pairs: LabelPairs = {
    of(tenant, tool) {
      const held = byTenant.get(tenant);
      const known = held?.pairs.get(tool);
      if (known) return known;
      if (live && tool !== UNKNOWN_TOOL_LABEL && !live(tenant, tool)) return pairs.of(tenant, UNKNOWN_TOOL_LABEL);
      let entry = held;
      if (!entry) byTenant.set(tenant, (entry = { pairs: new Map(), own: 0 }));
      const pair = admit(entry, tenant, tool);
      entry.pairs.set(tool, pair);
      return pair;
    },
    forget(tenant, tool) {
      const held = tenant === '' ? undefined : byTenant.get(tenant);
      const pair = held?.pairs.get(tool);
      if (!held || !pair) return undefined;
      held.pairs.delete(tool);
      if (held.pairs.size === 0 && !held.overflow) byTenant.delete(tenant);
      if (pair.folded) return undefined;
      held.own--;
      admitted--;
      return pair.labels;
    },
    forgetTenant(tenant) {
      const held = tenant === '' ? undefined : byTenant.get(tenant);
      if (!held) return [];
      byTenant.delete(tenant);
      const labels = [...held.pairs.values()].flatMap((pair) => (pair.folded ? [] : [pair.labels]));
      if (held.overflow) labels.push(held.overflow.labels);
      admitted -= labels.length;
      return labels;
    },
  };
  return pairs;
}
