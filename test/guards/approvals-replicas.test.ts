import { buildApp, PLUGINS, type App } from '../../src/app';
import { observabilityPlugin } from '../../src/app/plugins/observability-plugin';
import { createDispatchClient } from '../../src/client';
import { parseConfig } from '../../src/config';
import { SILENT_LOGGER } from '../../src/log';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { errorJson, recordingObserver, until, type SeenEvent } from './helpers';

let redis: TestRedis;
let tools: ToolServer;
const apps: App[] = [];
const clients: ReturnType<typeof createDispatchClient>[] = [];

beforeAll(async () => {
  redis = await startRedis();
  tools = await startToolServer({ '/charge': json({ charged: true }) });
});
afterAll(async () => {
  for (const c of clients) c.close();
  for (const app of apps) await app.close(200);
  await tools.close();
  await redis.close();
});

/** A replica of the full app on the shared Redis, with the guard events it records. */
async function replica(): Promise<{ client: ReturnType<typeof createDispatchClient>; events: SeenEvent[] }> {
  const recording = recordingObserver();
  const factories = PLUGINS.map((factory) => (factory === observabilityPlugin ? async () => ({ name: 'recording-observer', observer: recording.observer }) : factory));
  const yaml = `
tools:
  - name: charge
    effect: side_effect
    input_schema: '{"type":"object","properties":{"amount":{"type":"number"}}}'
    http: { url: "${tools.url}/charge" }
policies:
  - match: charge
    when: [{ pointer: /amount, op: ">=", value: 100 }]
    decide: ask
    reason: large payment
limits: { approval_timeout_ms: 5000 }
`;
  const app = await buildApp(parseConfig(yaml, 'test.yaml'), { logger: SILENT_LOGGER, redisUrl: redis.url }, factories);
  apps.push(app);
  const server = await app.listen('127.0.0.1:0');
  const client = createDispatchClient(`127.0.0.1:${server.port}`);
  clients.push(client);
  return { client, events: recording.events };
}

test('ResolveApproval on one replica decides an Ask waiting on another', async () => {
  const { client: a, events } = await replica();
  const { client: b } = await replica();
  const pending = a.dispatch({ sessionId: 's', interactive: true, calls: [{ id: 'c1', name: 'charge', arguments: '{"amount":150}' }] });
  await until(() => events.some((e) => e.kind === 'APPROVAL_REQUESTED'));
  const approvalId = events.find((e) => e.kind === 'APPROVAL_REQUESTED')!.detail;
  expect((await b.resolveApproval({ approvalId: 'unknown', approve: true })).resolved).toBe(false);
  expect((await b.resolveApproval({ approvalId, approve: true })).resolved).toBe(true);
  const { results } = await pending;
  expect(results[0]!.output).toBe('{"charged":true}');
  expect(tools.count('/charge')).toBe(1);
  expect((await b.resolveApproval({ approvalId, approve: true })).resolved).toBe(false);

  const denied = a.dispatch({ sessionId: 's2', interactive: true, calls: [{ id: 'c2', name: 'charge', arguments: '{"amount":200}' }] });
  await until(() => events.filter((e) => e.kind === 'APPROVAL_REQUESTED').length === 2);
  const second = events.filter((e) => e.kind === 'APPROVAL_REQUESTED')[1]!.detail;
  expect((await b.resolveApproval({ approvalId: second, approve: false })).resolved).toBe(true);
  expect(errorJson((await denied).results[0]!.output).message).toBe('approval was not granted: large payment');
  expect(tools.count('/charge')).toBe(1);
}, 30_000);
