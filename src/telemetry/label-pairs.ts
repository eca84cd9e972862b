import type { Attributes } from '@opentelemetry/api';

/** The tool label of calls whose name matched no tool, so invented names cannot grow the series. */
export const UNKNOWN_TOOL_LABEL = '_unknown';

/**
 * The tenant label of a config-file tool's breaker (its key names no tenant, as every tenant
 * shares it), and of any other series whose tenant is `''`. An explicit value rather than `''`,
 * which Prometheus would show as no tenant label at all.
 */
export const SHARED_TENANT_LABEL = '_shared';

/** The tenant and tool label of every (tenant, tool) pair that came after the cap was reached. */
export const OVERFLOW_LABEL = '_overflow';

/**
 * Distinct (tenant, tool) label pairs the per-tool series carry; later pairs share the
 * {@link OVERFLOW_LABEL} pair. A pair is 13 series (attempts, six rate counters, six rate gauges;
 * a breaker, slot and rate-limit series besides where it has them) plus 18 per outcome seen (a
 * count and the 17 lines of the duration histogram), so this bounds the per-tool series at some
 * 31,000 with one outcome per pair, ~103,000 with five (a scrape of 12 MB).
 */
export const DEFAULT_MAX_LABEL_PAIRS = 1000;

/** The `tenant` and `tool` labels of one series. */
export interface PairLabels extends Attributes {
  readonly tenant: string;
  readonly tool: string;
}

/** What {@link LabelPairs.of} returns: the same frozen object every time for a pair. */
export interface LabelPair {
  readonly labels: PairLabels;
  /** True when the pair came past the cap and `labels` is the overflow pair. */
  readonly folded: boolean;
}

/** Hands out the labels of (tenant, tool) pairs, admitting pairs until the cap. */
export interface LabelPairs {
  /** `tenant` as the caller's tenant or a breaker key's (`''` for a shared tool), `tool` as labelled. */
  of(tenant: string, tool: string): LabelPair;
}

const FOLDED: LabelPair = Object.freeze({ labels: Object.freeze({ tenant: OVERFLOW_LABEL, tool: OVERFLOW_LABEL }), folded: true });

/** Label pairs capped at `max` (0 folds every pair); a RangeError when `max` is not an integer >= 0. */
export function createLabelPairs(max: number = DEFAULT_MAX_LABEL_PAIRS): LabelPairs {
  if (!Number.isInteger(max) || max < 0) throw new RangeError(`maxLabelPairs must be an integer >= 0, got ${String(max)}`);
  const byTenant = new Map<string, Map<string, LabelPair>>();
  let admitted = 0;
  return {
    of(tenant, tool) {
      const tools = byTenant.get(tenant);
      const known = tools?.get(tool);
      if (known) return known;
      if (admitted >= max) return FOLDED;
      const pair: LabelPair = Object.freeze({ labels: Object.freeze({ tenant: tenant === '' ? SHARED_TENANT_LABEL : tenant, tool }), folded: false });
      if (tools) tools.set(tool, pair);
      else byTenant.set(tenant, new Map([[tool, pair]]));
      admitted++;
      return pair;
    },
  };
}
