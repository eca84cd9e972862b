import { createHash } from 'node:crypto';
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import { buildApp, type App } from '../../src/app';
import { createDispatchClient } from '../../src/client';
import { parseConfig } from '../../src/config';
import { SILENT_LOGGER } from '../../src/log';
import { dispatchctlAt } from '../helpers/dispatchctl';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { until } from '../helpers/until';

// An approval's wait ends at the approval timeout or the turn's deadline (the client's), whichever
// comes first: ListApprovals, `dispatchctl approvals` and the Redis index show that end, not
// approval_timeout_ms after the ask (an interactive call with a 3 s deadline was listed as
// "expires in 119s"). The memory store on one replica, and two replicas on a private redis-server.

jest.setTimeout(30_000);

const sha = (token: string) => createHash('sha256').update(token).digest('hex');
const ACME = { authorization: 'Bearer tok-acme' };
const ms = (t: Timestamp | undefined) => Number(t!.seconds) * 1000 + Math.round(t!.nanos / 1e6);

let tools: ToolServer;
let redis: TestRedis | undefined;
const apps: App[] = [];
const clients: ReturnType<typeof createDispatchClient>[] = [];
beforeAll(async () => {
  tools = await startToolServer({ '/refund': json({ refunded: true }) });
});
afterAll(async () => {
  for (const c of clients) c.close();
  for (const a of apps) await a.close(200);
  await tools.close();
  await redis?.close();
});

async function replica(redisUrl?: string): Promise<{ client: ReturnType<typeof createDispatchClient>; address: string }> {
  const yaml = `
auth:
  tokens:
    - { tenant: acme, scopes: [dispatch], sha256: ${sha('tok-acme')} }
tools:
  - name: refund
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/refund" }
policies:
  - match: refund
    decide: ask
    reason: refunds need an ok
limits: { approval_timeout_ms: 120000 }
`;
  const app = await buildApp(parseConfig(yaml, 'test.yaml'), { logger: SILENT_LOGGER, redisUrl });
  apps.push(app);
  const server = await app.listen('127.0.0.1:0');
  const address = `127.0.0.1:${server.port}`;
  const client = createDispatchClient(address);
  clients.push(client);
  return { client, address };
}

const refund = (client: ReturnType<typeof createDispatchClient>, sessionId: string, deadlineMs: number) =>
  client.dispatch({ sessionId, interactive: true, calls: [{ id: `c-${sessionId}`, name: 'refund', arguments: '{}' }] }, { metadata: ACME, deadlineMs }).catch((error: Error) => error);

const listedOne = (client: ReturnType<typeof createDispatchClient>) =>
  until(async () => (await client.listApprovals({}, { metadata: ACME })).approvals[0], 'the wait listed', 3_000);

test('a wait whose call has a 3 s deadline is listed as expiring by it, also by dispatchctl', async () => {
  const { client, address } = await replica();
  const before = Date.now();
  const pending = refund(client, 'short', 3_000);
  const wait = await listedOne(client);
  expect(ms(wait.expiresAt)).toBeLessThanOrEqual(before + 3_100);
  expect(ms(wait.expiresAt)).toBeGreaterThan(before + 2_000);
  const shown = await dispatchctlAt(() => address)('--token', 'tok-acme', 'approvals');
  expect(shown.out).toMatch(/expires in [123]s/);
  await pending;
});

test('with Redis, another replica lists the earlier end, and the wait is recorded no longer than it', async () => {
  redis = await startRedis({ own: true });
  const a = await replica(redis.url);
  const b = await replica(redis.url);
  const before = Date.now();
  // A 2 s deadline (no dispatchctl to start here): still far from the 120 s approval timeout.
  const pending = refund(a.client, 'shared', 2_000);
  const wait = await listedOne(b.client);
  expect(ms(wait.expiresAt)).toBeLessThanOrEqual(before + 2_100);
  expect(ms(wait.expiresAt)).toBeGreaterThan(before + 1_000);
  const ttl = Number(redis.cli('PTTL', `dispatch:approvals:pending:{${wait.approvalId}}`));
  expect(ttl).toBeGreaterThan(0);
  expect(ttl).toBeLessThanOrEqual(2_100);
  await pending;
});
