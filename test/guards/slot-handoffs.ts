import { maxInFlight, type startApp, type ToolServer } from '../helpers/servers';

// The handoff of a shared concurrency slot between two replicas, shared by the standalone and
// the Cluster tests: the `handoff` tool (one slot for all replicas, a 5 s wait) and four calls
// that take turns on it.

type Replica = Awaited<ReturnType<typeof startApp>>;

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
 * Four calls of `handoff`, alternating replicas, started 50 ms apart, so each waits for the one
 * before; returns their errors (none expected), the most the tool saw at once, and the time (ms)
 * from the end of each run to the start of the next.
 */
export async function takeTurns(a: Replica, b: Replica, tools: ToolServer): Promise<{ errors: string[]; maxInFlight: number; gaps: number[] }> {
  const results = await Promise.all(
    [a, b, a, b].map(async (app, i) => {
      await new Promise((r) => setTimeout(r, i * 50));
      return (await app.dispatch.dispatch({ sessionId: `handoff-${i}-${Date.now()}`, calls: [{ id: 'c', name: 'handoff', arguments: `{"n":${i}}` }] })).results[0]!;
    }),
  );
  const runs = tools.received.filter((r) => r.path === '/handoff').sort((x, y) => x.start - y.start);
  return {
    errors: results.filter((r) => r.isError).map((r) => r.output),
    maxInFlight: maxInFlight(runs),
    gaps: runs.slice(1).map((r, i) => r.start - runs[i]!.end!),
  };
}
