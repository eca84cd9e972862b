import { DispatchMode } from '../../gen/dispatch/v1/dispatch_pb';
import { PLUGINS } from '../../src/app';
import { guardsPlugin, createGuardsPlugin } from '../../src/app/plugins/guards-plugin';
import { observabilityPlugin } from '../../src/app/plugins/observability-plugin';
import { useToolsAndRedis } from '../helpers/redis-app';
import { startApp, type ToolRoute } from '../helpers/servers';
import { errorJson, recordingObserver, until } from '../guards/helpers';

// Issue 4 item 2: "half-open with a single probe". The service tests send the probe and the
// calls refused beside it one turn after another; here they race in one parallel turn, for a
// read-only tool and for a side-effecting one (whose calls take their idempotency claims before
// the breaker gate: the refused ones must give them back), with both stores.

let failing = true;
const route: ToolRoute = async (_req, res) => {
  await new Promise((r) => setTimeout(r, 150));
  res.writeHead(failing ? 503 : 200).end(failing ? 'down' : 'fine');
};
const setup = useToolsAndRedis({ '/read': route, '/write': route });

const yaml = (url: string) => `
tools:
  - { name: read, effect: read_only, concurrency_safe: true, retry: { max_attempts: 1 }, input_schema: '{"type":"object"}', http: { url: "${url}/read" } }
  - { name: write, effect: side_effect, concurrency_safe: true, retry: { max_attempts: 1 }, input_schema: '{"type":"object"}', http: { url: "${url}/write" } }
policies:
  - { match: "*", breaker: { consecutive_failures: 2, half_open_after_ms: 300 } }
`;

const kinds = (results: { output: string; isError: boolean }[]) => results.map((r) => (r.isError ? errorJson(r.output).kind : 'OK'));

describe.each(['memory', 'redis'] as const)('with the %s store', (store) => {
  test.each(['read', 'write'])('%s: one probe among four calls racing in a parallel turn', async (tool) => {
    const { observer, events } = recordingObserver();
    const factories = PLUGINS.map((f) => (f === observabilityPlugin ? async () => ({ name: 'recording-observer', observer }) : f === guardsPlugin ? createGuardsPlugin() : f));
    const d = await startApp(yaml(setup.tools.url), store === 'redis' ? { redisUrl: setup.redis.url } : {}, factories);
    const states = () => events.filter((e) => e.kind === 'BREAKER_STATE' && e.tool === tool).map((e) => e.detail);
    try {
      failing = true;
      const path = `/${tool}`;
      const session = `${store}-${tool}`;
      const calls = (from: number, count: number) => Array.from({ length: count }, (_, i) => ({ id: `c${from + i}`, name: tool, arguments: JSON.stringify({ n: from + i }) }));
      await d.dispatch.dispatch({ sessionId: session, calls: calls(0, 2) });
      await until(() => states().includes('half_open'));
      failing = false;
      const before = setup.tools.count(path);
      const turn = await d.dispatch.dispatch({ sessionId: session, mode: DispatchMode.PARALLEL, calls: calls(10, 4) });
      expect(kinds(turn.results).sort()).toEqual(['BREAKER_OPEN', 'BREAKER_OPEN', 'BREAKER_OPEN', 'OK']);
      expect(setup.tools.count(path) - before).toBe(1);
      expect(states()).toEqual(['open', 'half_open', 'closed']);
      // The refused calls, sent again, run: nothing of theirs was kept (no claim IN_PROGRESS, no replay).
      const refused = turn.results.filter((r) => r.isError).map((r) => Number(r.toolCallId.slice(1)));
      const again = await d.dispatch.dispatch({ sessionId: session, mode: DispatchMode.PARALLEL, calls: refused.map((n) => ({ id: `r${n}`, name: tool, arguments: JSON.stringify({ n }) })) });
      expect(kinds(again.results)).toEqual(['OK', 'OK', 'OK']);
      expect(again.results.some((r) => r.idempotentReplay)).toBe(false);
      expect(setup.tools.count(path) - before).toBe(4);
    } finally {
      await d.close();
    }
  });
});
