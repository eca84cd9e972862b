import { maxInFlight, type ToolServer } from '../helpers/servers';
import type { Replica } from './replica-pair';

// The handoff of a shared concurrency slot between two replicas, shared by the standalone and
// the Cluster tests: the `handoff` tool (one slot for all replicas, a 5 s wait, held 450 ms by
// each call) and three handoffs of its slot.

/** The `handoff` tool's entry under `tools:`, served at `${url}/handoff`. */
export const handoffTool = (url: string) => `
  - name: handoff
    effect: read_only
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${url}/handoff" }`;

/** Its cap, an entry under `policies:`. */
export const HANDOFF_POLICY = `
  - match: handoff
    concurrency: { max_in_flight: 1, wait_ms: 5000, shared: true }`;

/**
 * Three handoffs of the `handoff` slot between the replicas: each time one replica's call holds
 * it (450 ms) and the other's, started 50 ms later, waits alone for it. Returns the errors (none
 * expected), the most the tool saw at once, and for each handoff the time (ms) from the end of
 * the first run to the start of the second. A waiter that only tried again on its timer would
 * start ~170 ms after the slot came free: its tries fall 25, 75, 175, 375 and 575 ms after it
 * asked, the slot comes free ~400 ms after.
 */
export async function takeTurns(a: Replica, b: Replica, tools: ToolServer): Promise<{ errors: string[]; maxInFlight: number; gaps: number[] }> {
  let n = 0;
  const call = (app: Replica) => app.dispatch.dispatch({ sessionId: `handoff-${Date.now()}-${++n}`, calls: [{ id: 'c', name: 'handoff', arguments: `{"n":${n}}` }] }).then((r) => r.results[0]!);
  const errors: string[] = [];
  const gaps: number[] = [];
  let most = 0;
  for (const [holder, waiter] of [[a, b], [b, a], [a, b]] as const) {
    const from = tools.received.length;
    const held = call(holder);
    await new Promise((r) => setTimeout(r, 50));
    for (const r of await Promise.all([held, call(waiter)])) if (r.isError) errors.push(r.output);
    const [first, second] = tools.received.slice(from).filter((r) => r.path === '/handoff').sort((x, y) => x.start - y.start);
    if (!first || !second) throw new Error('a handoff call did not reach the tool');
    most = Math.max(most, maxInFlight([first, second]));
    gaps.push(second.start - first.end!);
  }
  return { errors, maxInFlight: most, gaps };
}

/**
 * Runs {@link takeTurns} and checks that every handoff was quick: no errors, never two at once,
 * and the median gap under 100 ms (5-36 ms measured under a loaded run, once 80 ms in a full CI
 * run; 126-183 ms when waiters only tried on their timer; the median, as on a loaded machine one
 * handoff may be slow).
 */
export async function expectQuickHandoffs(a: Replica, b: Replica, tools: ToolServer): Promise<void> {
  const turns = await takeTurns(a, b, tools);
  expect(turns.errors).toEqual([]);
  expect(turns.maxInFlight).toBe(1);
  expect(turns.gaps).toHaveLength(3);
  expect([...turns.gaps].sort((x, y) => x - y)[1]).toBeLessThan(100);
}
