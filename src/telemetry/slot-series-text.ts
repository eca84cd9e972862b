import { parseBreakerKey } from '../pipeline';
import { header, pairLabelText } from './call-metrics-text';
import type { LabelPairs, LiveTool, PairLabels } from './label-pairs';
import type { SlicedText } from './sliced-text';

/** The counts of the concurrency caps and rate limits by breaker key, read at scrape time. */
export interface SlotCounts {
  readonly inUse?: ReadonlyMap<string, number>;
  readonly slotRefusals?: ReadonlyMap<string, number>;
  readonly rateRefusals?: ReadonlyMap<string, number>;
}

/** The per-pair series of the concurrency caps and rate limits. */
export interface SlotSeries {
  /** Their label pairs taken now (as the breakers' are), their text added to `out` later. */
  text(counts: SlotCounts): (out: SlicedText) => Promise<void>;
  /** Drops a pair its label pairs forgot (LabelPairs.forget). */
  forget(labels: PairLabels): void;
}

/**
 * `dispatch_tool_in_flight`, `dispatch_tool_slot_refusals_total` and
 * `dispatch_tool_rate_refusals_total` per tenant and tool, as Prometheus text, byte for byte as
 * the SDK's observable instruments wrote them. Written here because the SDK's cumulative
 * instruments keep every attribute set they were given until the process ends: a removed tool's
 * series would stay, under labels its pair no longer holds. The guards keep a removed tool's
 * counts (bounded, by breaker key); with `live`, its keys are left out, not re-admitted as pairs.
 * Counts of keys folded into one pair are summed. A pair seen once in the in-flight gauge is shown
 * at 0 when idle, until forgotten.
 */
export function createSlotSeries(pairs: LabelPairs, live?: LiveTool): SlotSeries {
  const slotPairs = new Set<PairLabels>();
  const byPair = (counts: ReadonlyMap<string, number> | undefined) => {
    const sums = new Map<PairLabels, number>();
    for (const [key, count] of counts ?? []) {
      const { tenant, tool } = parseBreakerKey(key);
      if (live && !live(tenant, tool)) continue;
      const { labels } = pairs.of(tenant, tool);
      sums.set(labels, (sums.get(labels) ?? 0) + count);
    }
    return sums;
  };
  return {
    text(counts) {
      const inUse = byPair(counts.inUse);
      for (const labels of inUse.keys()) slotPairs.add(labels);
      const inFlight = new Map([...slotPairs].map((labels) => [labels, inUse.get(labels) ?? 0]));
      const slotRefusals = byPair(counts.slotRefusals);
      const rateRefusals = byPair(counts.rateRefusals);
      return async (out) => {
        await seriesText(out, 'dispatch_tool_in_flight', 'gauge', 'Attempts running now of each tool with a concurrency cap (policies concurrency:), per tenant and tool', inFlight);
        await seriesText(out, 'dispatch_tool_slot_refusals_total', 'counter', "Attempts refused UNAVAILABLE before execution because every slot of their tool's concurrency cap stayed taken, per tenant and tool", slotRefusals);
        await seriesText(out, 'dispatch_tool_rate_refusals_total', 'counter', "Attempts refused UNAVAILABLE before execution because their turn under their tool's rate limit (policies rate:) was further away than they could wait, per tenant and tool", rateRefusals);
      };
    },
    forget(labels) {
      slotPairs.delete(labels);
    },
  };
}

/** One metric's series, nothing at all (as the SDK) when it has none. */
async function seriesText(out: SlicedText, metric: string, type: string, help: string, values: ReadonlyMap<PairLabels, number>): Promise<void> {
  if (values.size === 0) return;
  out.add(header(metric, type, help));
  await out.each(values, ([labels, value]) => `${metric}{${pairLabelText(labels)}} ${value}\n`);
}
