import { createHash } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import { buildApp, type App } from '../../src/app';
import { createDispatchClient } from '../../src/client';
import { parseConfig } from '../../src/config';
import { SILENT_LOGGER } from '../../src/log';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { until } from '../helpers/until';

// ListApprovals with Redis reads what it answers, not the tenant's whole index: the script matches
// the session and tool filters on a small hash of each id's tool and session and reads the JSON of
// one page only (100 at most, ~1 MB at most), each entry's arguments cut to 2,000 characters. With
// 300 waits of 9,000 CJK characters each (~24 KB of JSON apiece before), a listing filtered to one
// session moved ~7 MB out of Redis, and 16 approvers listing in a loop made Redis drop every
// replica's connections. Listings running at once are bounded: 8 per replica, 2 per tenant.
// 150 waits here, more than a page: before, a listing moved them all, ~3.5 MB, well past the bounds below.

jest.setTimeout(60_000);

const sha = (token: string) => createHash('sha256').update(token).digest('hex');
const TENANTS = ['acme', 't1', 't2', 't3', 't4'];
const as = (tenant: string) => ({ metadata: { authorization: `Bearer tok-${tenant}` } });
const WAITS = 150;
const MEMO = '\u4e2d'.repeat(9_000);

let redis: TestRedis;
let tools: ToolServer;
const apps: App[] = [];
const clients: ReturnType<typeof createDispatchClient>[] = [];
let pending: Promise<unknown>[] = [];

beforeAll(async () => {
  redis = await startRedis({ own: true });
  tools = await startToolServer({ '/charge': json({ charged: true }) });
});
afterAll(async () => {
  for (const c of clients) c.close();
  for (const a of apps) await a.close(200);
  await Promise.allSettled(pending);
  await tools.close();
  await redis.close();
});

async function replica(): Promise<ReturnType<typeof createDispatchClient>> {
  const yaml = `
auth:
  tokens:
${TENANTS.map((t) => `    - { tenant: ${t}, scopes: [dispatch], sha256: ${sha(`tok-${t}`)} }`).join('\n')}
tools:
  - name: charge
    effect: side_effect
    input_schema: '{"type":"object","properties":{"memo":{"type":"string"}}}'
    http: { url: "${tools.url}/charge" }
policies:
  - match: charge
    decide: ask
    reason: payments need an ok
limits: { approval_timeout_ms: 60000 }
`;
  const app = await buildApp(parseConfig(yaml, 'test.yaml'), { logger: SILENT_LOGGER, redisUrl: redis.url });
  apps.push(app);
  const server = await app.listen('127.0.0.1:0');
  const client = createDispatchClient(`127.0.0.1:${server.port}`);
  clients.push(client);
  return client;
}

const outputBytes = () => Number(/total_net_output_bytes:(\d+)/.exec(redis.cli('INFO', 'stats'))![1]);

/** What Redis sent while `work` ran, in bytes, and what `work` answered. */
async function sent<T>(work: () => Promise<T>): Promise<[number, T]> {
  const before = outputBytes();
  const answer = await work();
  return [outputBytes() - before, answer];
}

test('a listing filtered to one session of 150 large waits moves little out of Redis; an unfiltered one a page of 100', async () => {
  const a = await replica();
  const b = await replica();
  // Half on each replica (each holds at most 250 of a tenant).
  pending = Array.from({ length: WAITS }, (_, i) =>
    (i % 2 === 0 ? a : b).dispatch({ sessionId: `s${i}`, interactive: true, calls: [{ id: `c${i}`, name: 'charge', arguments: JSON.stringify({ memo: MEMO }) }] }, as('acme')).catch(() => undefined),
  );
  await until(() => (Number(redis.cli('ZCARD', 'dispatch:approvals:tenant:{acme}')) === WAITS ? true : undefined), `${WAITS} waits indexed`, 30_000);

  const [filteredBytes, filtered] = await sent(() => b.listApprovals({ sessionId: 's7' }, as('acme')));
  expect(filtered.approvals.map((x) => x.toolCallId)).toEqual(['c7']);
  expect(filteredBytes).toBeLessThan(200_000);
  expect(filtered.truncated).toBe(false);
  expect(filtered.approvals[0]!.arguments).toBe(`${JSON.stringify({ memo: MEMO }).slice(0, 2_000)}...`);

  const [noneBytes, none] = await sent(() => a.listApprovals({ tool: 'other' }, as('acme')));
  expect(none.approvals).toEqual([]);
  expect(noneBytes).toBeLessThan(100_000);

  const [pageBytes, page] = await sent(() => a.listApprovals({}, as('acme')));
  expect([page.approvals.length, page.truncated]).toEqual([100, true]);
  const expiries = page.approvals.map((x) => Number(x.expiresAt!.seconds) * 1000 + Math.round(x.expiresAt!.nanos / 1e6));
  expect(expiries).toEqual([...expiries].sort((x, y) => x - y));
  // 100 entries of ~6 KB of UTF-8 each; before, every one of the 150 (~3.5 MB).
  expect(pageBytes).toBeLessThan(1_300_000);
});

test('ListApprovals running at once are bounded: 2 per tenant, 8 per replica; past them RESOURCE_EXHAUSTED at once', async () => {
  const c = await replica();
  // Redis frozen: each listing waits for it (up to the relay's 2 s).
  redis.signal('SIGSTOP');
  const held: Promise<unknown>[] = [];
  const hold = (tenant: string) => held.push(c.listApprovals({}, as(tenant)).catch((error: { code: number }) => error.code));
  try {
    hold('acme');
    hold('acme');
    await new Promise((r) => setTimeout(r, 150));
    let started = Date.now();
    await expect(c.listApprovals({}, as('acme'))).rejects.toMatchObject({
      code: status.RESOURCE_EXHAUSTED,
      details: 'tenant "acme" is running its limit of 2 ListApprovals calls at once on this dispatch replica; try again shortly',
    });
    expect(Date.now() - started).toBeLessThan(1_000);
    for (const tenant of ['t1', 't2', 't3']) {
      hold(tenant);
      hold(tenant);
    }
    await new Promise((r) => setTimeout(r, 150));
    started = Date.now();
    await expect(c.listApprovals({}, as('t4'))).rejects.toMatchObject({
      code: status.RESOURCE_EXHAUSTED,
      details: 'this dispatch replica is running its limit of 8 ListApprovals calls at once; try again shortly',
    });
    expect(Date.now() - started).toBeLessThan(1_000);
  } finally {
    redis.signal('SIGCONT');
  }
  // The held ones end (UNAVAILABLE after 2 s, or answered), and their places are free again.
  await Promise.all(held);
  await until(async () => ((await c.listApprovals({}, as('t4')).catch(() => undefined)) ? true : undefined), 'a listing admitted again', 5_000);
});
