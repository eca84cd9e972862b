import { parseBreakerKey } from '../pipeline';
import { TRIM_TO, waterLevel } from '../store';

/**
 * Makes room in a replica's own rate limits (`emptyAt`: each limited tool's time at which its
 * limit is back to empty, by breaker key), down to a tenth below `max` so that a pass is rare and
 * the cost per new tool flat. First the limits back to empty at `now` go: forgotten, they start
 * empty again, as they are. Then the tenants holding more than an equal share are cut to it
 * (water-filling, as the memo cache's marks and the memory store do), each losing the limits
 * nearest to empty first (forgetting one lets its tool start early by what it still held: the
 * least). So one tenant's flood of distinct tools (1,000 of its own, registered and removed in
 * turn; or many tenants' tools called in a loop) forgets only the limits of the tenants past their
 * share, never those of a tenant within it. Before, when every limit was still in use, all were
 * forgotten at once, and every tool of every tenant could burst again. The config file's tools
 * count as one tenant (''). With more tenants than one limit each fits, the oldest limits go.
 * The times told to refused calls (told-turns.ts, by the same keys) are trimmed alike.
 */
export function trimLimits(emptyAt: Map<string, number>, now: number, max: number): void {
  for (const [key, at] of emptyAt) if (at <= now) emptyAt.delete(key);
  const keep = Math.floor(max * TRIM_TO);
  if (emptyAt.size <= keep) return;
  const tenants = new Map<string, Array<[string, number]>>();
  for (const entry of emptyAt) {
    const tenant = parseBreakerKey(entry[0]).tenant;
    const held = tenants.get(tenant);
    if (held) held.push(entry);
    else tenants.set(tenant, [entry]);
  }
  const level = Math.max(1, waterLevel(Float64Array.from(tenants.values(), (held) => held.length), keep));
  for (const held of tenants.values()) {
    if (held.length <= level) continue;
    held.sort((a, b) => a[1] - b[1]);
    for (let i = 0; i < held.length - level; i++) emptyAt.delete(held[i]![0]);
  }
  for (const key of emptyAt.keys()) {
    if (emptyAt.size <= keep) break;
    emptyAt.delete(key);
  }
}
