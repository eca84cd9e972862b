import { createHash } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import { buildApp, type App } from '../../src/app';
import { createDispatchClient } from '../../src/client';
import { parseConfig } from '../../src/config';
import { indexedApprovals, indexApproval } from '../../src/guards/approvals-index';
import { SILENT_LOGGER } from '../../src/log';
import { connectRedis, defineApprovalScripts } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { until } from '../helpers/until';

// ListApprovals with Redis lists the caller's tenant's approvals waiting on any replica: each wait
// is indexed under its tenant (a sorted set by expiry and a hash of what is shown, written and
// read by Lua scripts) beside its pending key, and taken out when it ends. Two replicas of the full
// app on one private redis-server: B lists a wait held on A, with the arguments that run, and
// decides it; a decided, ended or timed-out wait is listed by neither, and an entry left by a
// replica that died is pruned once its wait would have ended.

jest.setTimeout(30_000);

const sha = (token: string) => createHash('sha256').update(token).digest('hex');
const ACME = { metadata: { authorization: 'Bearer tok-acme' } };
const GLOBEX = { metadata: { authorization: 'Bearer tok-globex' } };

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

async function replica(timeoutMs = 10_000): Promise<ReturnType<typeof createDispatchClient>> {
  const yaml = `
auth:
  tokens:
    - { tenant: acme, scopes: [dispatch], sha256: ${sha('tok-acme')} }
    - { tenant: globex, scopes: [dispatch], sha256: ${sha('tok-globex')} }
tools:
  - name: charge
    effect: side_effect
    input_schema: '{"type":"object","properties":{"amount":{"type":"number"},"memo":{"type":"string"}}}'
    http: { url: "${tools.url}/charge" }
policies:
  - match: charge
    decide: modify
    set: { /memo: audited }
  - match: charge
    decide: ask
    reason: payments need an ok
limits: { approval_timeout_ms: ${timeoutMs} }
`;
  const app = await buildApp(parseConfig(yaml, 'test.yaml'), { logger: SILENT_LOGGER, redisUrl: redis.url });
  apps.push(app);
  const server = await app.listen('127.0.0.1:0');
  const client = createDispatchClient(`127.0.0.1:${server.port}`);
  clients.push(client);
  return client;
}

const charge = (client: ReturnType<typeof createDispatchClient>, sessionId: string, amount: number) =>
  client.dispatch({ sessionId, interactive: true, calls: [{ id: `c-${sessionId}`, name: 'charge', arguments: JSON.stringify({ amount }) }] }, ACME);

/** The approvals `client` lists, once there are `count` of them. */
const listedCount = (client: ReturnType<typeof createDispatchClient>, count: number, filter = {}) =>
  until(async () => {
    const { approvals } = await client.listApprovals(filter, ACME);
    return approvals.length === count ? approvals : undefined;
  }, `${count} approvals listed`, 5_000);

const indexKeys = () => redis.cli('--scan', '--pattern', 'dispatch:approvals:tenant:*').trim().split('\n').filter((line) => line !== '');

test('replica B lists a wait held on replica A, with the arguments that run, and decides it; decided or ended waits are listed by neither', async () => {
  const a = await replica();
  const b = await replica();
  // One after the other: sent together, either may be held first (the list is in request order).
  const paid = charge(a, 'pay', 150);
  await listedCount(b, 1);
  const ended = charge(a, 'ends', 20);
  const [first, second] = await listedCount(b, 2);
  expect([first!.toolCallId, second!.toolCallId]).toEqual(['c-pay', 'c-ends']);
  expect(first).toMatchObject({ sessionId: 'pay', tool: 'charge', arguments: '{"amount":150,"memo":"audited"}', argumentsModified: true, reason: 'payments need an ok' });
  expect(Number(first!.expiresAt!.seconds) - Number(first!.requestedAt!.seconds)).toBeGreaterThanOrEqual(9);
  expect((await b.listApprovals({ sessionId: 'ends' }, ACME)).approvals.map((x) => x.toolCallId)).toEqual(['c-ends']);
  expect((await b.listApprovals({ tool: 'other' }, ACME)).approvals).toEqual([]);
  expect((await b.listApprovals({}, GLOBEX)).approvals).toEqual([]);
  // A lists the same (its own, once each).
  expect((await a.listApprovals({}, ACME)).approvals.map((x) => x.approvalId)).toEqual([first!.approvalId, second!.approvalId]);

  expect((await b.resolveApproval({ approvalId: first!.approvalId, approve: true }, ACME)).resolved).toBe(true);
  expect((await paid).results[0]!.isError).toBe(false);
  await listedCount(b, 1);
  await b.endSession({ sessionId: 'ends' }, ACME);
  expect(JSON.parse((await ended).results[0]!.output)).toMatchObject({ kind: 'BLOCKED' });
  await listedCount(b, 0);
  expect((await a.listApprovals({}, ACME)).approvals).toEqual([]);
  // Emptied, so gone: Redis deletes an empty sorted set and hash.
  await until(() => (indexKeys().length === 0 ? true : undefined), 'the index emptied', 2_000);
});

test('a wait that timed out on A is no longer listed on B', async () => {
  const a = await replica(800);
  const b = await replica(800);
  const pending = charge(a, 'late', 5);
  await listedCount(b, 1);
  expect(JSON.parse((await pending).results[0]!.output)).toMatchObject({ kind: 'BLOCKED', message: 'approval timed out: no approver answered within 0.8 s, so the call was not executed: payments need an ok' });
  await listedCount(b, 0);
});

test('an entry left by a replica that died is pruned once its wait would have ended', async () => {
  const redisClient = connectRedis(redis.url, { queueWhileDown: true });
  try {
    defineApprovalScripts(redisClient);
    const now = Date.now();
    const shown = (approvalId: string, ttlMs: number) => ({ approvalId, sessionId: 's', toolCallId: approvalId, tool: 'charge', arguments: '{}', argumentsModified: false, reason: 'r', requestedAt: now, expiresAt: now + ttlMs });
    // Its replica died before forgetting it; another wait of the tenant keeps the keys alive.
    expect(await indexApproval(redisClient, 'dead-tenant', shown('gone', 300), 300)).toBe(true);
    expect(await indexApproval(redisClient, 'dead-tenant', shown('alive', 20_000), 20_000)).toBe(true);
    expect((await indexedApprovals(redisClient, 'dead-tenant')).approvals.map((x) => x.approvalId)).toEqual(['gone', 'alive']);
    await new Promise((r) => setTimeout(r, 400));
    expect((await indexedApprovals(redisClient, 'dead-tenant')).approvals.map((x) => x.approvalId)).toEqual(['alive']);
    const [index] = indexKeys().filter((key) => key.includes('dead-tenant') && !key.endsWith(':shown') && !key.endsWith(':who'));
    expect(redis.cli('zrange', index!, '0', '-1').trim()).toBe('alive');
    expect(redis.cli('hkeys', `${index!}:shown`).trim()).toBe('alive');
    expect(redis.cli('hkeys', `${index!}:who`).trim()).toBe('alive');
  } finally {
    redisClient.disconnect();
  }
});

test('with Redis away, ListApprovals is UNAVAILABLE (the other replicas\' waits cannot be read), within the relay\'s 2 s', async () => {
  const b = await replica();
  await redis.stop();
  try {
    const started = Date.now();
    await expect(b.listApprovals({}, ACME)).rejects.toMatchObject({ code: status.UNAVAILABLE, details: 'Redis did not answer in time: the approvals waiting on other replicas cannot be listed; ask again shortly' });
    expect(Date.now() - started).toBeLessThan(4_000);
  } finally {
    await redis.start();
  }
});
