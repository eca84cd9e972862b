import { buildApp, PLUGINS, type App } from '../../src/app';
import { observabilityPlugin } from '../../src/app/plugins/observability-plugin';
import { createDispatchClient } from '../../src/client';
import { parseConfig } from '../../src/config';
import { SILENT_LOGGER } from '../../src/log';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { recordingObserver, until, type SeenEvent } from './helpers';

// EndSession refuses the session's pending approvals, on the replica that waits and (with Redis)
// on another: before, an approval still pending when its session ended could be granted after,
// and the call then ran in the ended session's fresh state. Another session's wait goes on.

jest.setTimeout(30_000);

let redis: TestRedis;
let tools: ToolServer;
const apps: App[] = [];
const clients: ReturnType<typeof createDispatchClient>[] = [];
beforeAll(async () => {
  redis = await startRedis({ own: true });
  tools = await startToolServer({ '/charge': json({ charged: true }) });
});
afterAll(async () => {
  for (const c of clients) c.close();
  for (const a of apps) await a.close(200);
  await tools.close();
  await redis.close();
});

async function replica(redisUrl?: string) {
  const recording = recordingObserver();
  const factories = PLUGINS.map((f) => (f === observabilityPlugin ? async () => ({ name: 'recorder', observer: recording.observer }) : f));
  const yaml = `
tools:
  - name: charge
    effect: side_effect
    input_schema: '{"type":"object","properties":{"amount":{"type":"number"}}}'
    http: { url: "${tools.url}/charge" }
policies:
  - match: charge
    decide: ask
    reason: needs ok
limits: { approval_timeout_ms: 10000 }
`;
  const app = await buildApp(parseConfig(yaml, 't.yaml'), { logger: SILENT_LOGGER, redisUrl }, factories);
  apps.push(app);
  const server = await app.listen('127.0.0.1:0');
  const client = createDispatchClient(`127.0.0.1:${server.port}`);
  clients.push(client);
  return { client, events: recording.events };
}

const asked = (events: SeenEvent[]) => events.filter((e) => e.kind === 'APPROVAL_REQUESTED').map((e) => e.detail);

test.each([
  ['on the replica that waits, with the memory store', false],
  ['on another replica, with Redis', true],
])('EndSession refuses a pending approval %s; the call never runs, another session waits on', async (_name, shared) => {
  const url = shared ? redis.url : undefined;
  const a = await replica(url);
  const ender = shared ? await replica(url) : a;
  const charges = tools.count('/charge');
  const ended = a.client.dispatch({ sessionId: `ends-${shared}`, interactive: true, calls: [{ id: 'c1', name: 'charge', arguments: '{"amount":1}' }] });
  const other = a.client.dispatch({ sessionId: `stays-${shared}`, interactive: true, calls: [{ id: 'c1', name: 'charge', arguments: '{"amount":2}' }] });
  await until(() => asked(a.events).length === 2);
  const started = Date.now();
  await ender.client.endSession({ sessionId: `ends-${shared}` });
  const result = (await ended).results[0]!;
  expect(Date.now() - started).toBeLessThan(3_000);
  expect(JSON.parse(result.output)).toMatchObject({ kind: 'BLOCKED', message: 'the session ended while the call waited for approval, so it was not executed: needs ok' });
  const [first, second] = asked(a.events);
  // The ended session's approval is gone; the other session's is still waiting and decides its call.
  const resolvedEnded = await a.client.resolveApproval({ approvalId: first!, approve: true });
  const resolvedOther = await a.client.resolveApproval({ approvalId: second!, approve: true });
  expect([resolvedEnded.resolved, resolvedOther.resolved].sort()).toEqual([false, true]);
  expect((await other).results[0]!.isError).toBe(false);
  expect(tools.count('/charge') - charges).toBe(1);
});
