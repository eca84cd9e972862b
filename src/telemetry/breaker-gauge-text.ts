import { parseBreakerKey } from '../pipeline';
import { header, pairLabelText } from './call-metrics-text';
import type { LabelPairs, PairLabels } from './label-pairs';
import type { SlicedText } from './sliced-text';

const BREAKER_VALUE: Readonly<Record<string, number>> = { closed: 0, half_open: 1, open: 2 };

/**
 * `dispatch_breaker_state` per tenant and tool, as Prometheus text, of the breakers in `states`
 * (by breaker key) at scrape time. Written here rather than through an SDK observable gauge, which
 * goes on showing a series' last value once it is no longer observed: a removed tool's breaker
 * leaves the scrape. The overflow pair shows the worst state of the breakers folded into it. The
 * states and their label pairs are taken at once; the text is added to `out` later, in its slices.
 */
export function breakerGaugeText(states: ReadonlyMap<string, string>, pairs: LabelPairs): (out: SlicedText) => Promise<void> {
  const worst = new Map<PairLabels, number>();
  for (const [key, state] of states) {
    const { tenant, tool } = parseBreakerKey(key);
    const { labels } = pairs.of(tenant, tool);
    worst.set(labels, Math.max(worst.get(labels) ?? 0, BREAKER_VALUE[state] ?? 0));
  }
  return async (out) => {
    out.add(header('dispatch_breaker_state', 'gauge', 'Breaker state per tenant and tool (a config-file tool: the calling tenant\'s own breaker, "_shared" without auth): 0 closed, 1 half open, 2 open'));
    await out.each(worst, ([labels, value]) => `dispatch_breaker_state{${pairLabelText(labels)}} ${value}\n`);
  };
}
