import type { ToolStats } from '../../gen/dispatch/v1/registry_pb';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';
import { bearer, expectSixAlerts, sixRateRoutes, tokenEntry } from '../telemetry/metrics-app';

// Issue 6, GetToolStats: every one of the six alert flags, with the Redis store and two replicas:
// calls spread over replica A and B (a side-effecting call run on A and replayed on B), the
// answer asked of either. The existing Redis tests check the validation and bounding rates only;
// the other four flags are checked on the memory store alone.

jest.setTimeout(60_000);

const TOOLS = (url: string) => `
auth:
  tokens:
${tokenEntry('acme', 'tok-acme', ['dispatch'])}tools:
  - { name: weather, effect: read_only, input_schema: '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}', http: { url: "${url}/weather" } }
  - { name: slow, effect: read_only, timeout_ms: 50, retry: { initial_backoff_ms: 5, max_backoff_ms: 10 }, http: { url: "${url}/slow" } }
  - { name: crashy, effect: read_only, returns_json: true, retry: { max_attempts: 1 }, http: { url: "${url}/crashy" } }
  - { name: big, effect: read_only, max_result_chars: 100, http: { url: "${url}/big" } }
  - { name: send, effect: side_effect, http: { url: "${url}/send" } }
`;
const ACME = bearer('tok-acme');
const saved = { ...process.env };

let redis: TestRedis;
let tools: ToolServer;
let a: TestDispatch;
let b: TestDispatch;
beforeAll(async () => {
  process.env.DISPATCH_STATS_FLUSH_MS = '50';
  redis = await startRedis({ own: true });
  tools = await startToolServer({
    ...sixRateRoutes(),
  });
  [a, b] = await Promise.all([0, 1].map(() => startApp(TOOLS(tools.url), { redisUrl: redis.url })));
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close(), tools?.close()]);
  await redis?.close();
  process.env = saved;
});

const one = (d: TestDispatch, name: string, args: object, session = 'm') => d.dispatch.dispatch({ sessionId: session, calls: [{ id: 'c', name, arguments: JSON.stringify(args) }] }, ACME);

test('the six alert flags, over calls spread across two replicas, in the answer of either', async () => {
  await one(a, 'weather', { city: 'Rome' });
  await one(b, 'weather', { city: 'Oslo' });
  await one(a, 'weather', { city: 5 });
  await one(b, 'slow', {});
  await one(a, 'crashy', {});
  await one(b, 'big', {});
  expect((await one(a, 'send', { to: 'x' }, 's1')).results[0]!.idempotentReplay).toBe(false);
  expect((await one(b, 'send', { to: 'x' }, 's1')).results[0]!.idempotentReplay).toBe(true);
  expect(tools.count('/send')).toBe(1);
  for (const d of [a, b]) {
    const deadline = Date.now() + 10_000;
    let byTool: Record<string, ToolStats> = {};
    const total = () => Object.values(byTool).reduce((n, s) => n + Number(s.calls), 0);
    while (Date.now() < deadline) {
      byTool = Object.fromEntries((await d.registry.getToolStats({}, ACME)).stats.map((s) => [s.tool, s]));
      if (total() === 8) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(total()).toBe(8);
    expectSixAlerts(byTool);
  }
});
