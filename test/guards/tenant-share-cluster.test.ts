import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-server';
import { json, startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { closeReplicaPair, type Replica } from './replica-pair';
import { expectBurstKeptToShare, expectWaitersKeptToShare, SHARED_SHARE_POLICIES } from './tenant-share-checks';
import { callAs, plainTool, TWO_TENANTS_AUTH } from './two-tenants';

// Tenant shares of `shared: true` caps on a Redis Cluster (three masters on loopback): the tool's
// leases and the tenant's are counted on the master of the tool's key in one step (take-slot.lua;
// each lease id names its tenant, so no key of another slot is needed), for two replicas together;
// a per-tenant rate limit is one GCRA time per tenant and tool, on the master of that key.

jest.setTimeout(60_000);

const yaml = (url: string) => `${TWO_TENANTS_AUTH}
tools:
${plainTool(url, 'capped')}${plainTool(url, 'queued')}${plainTool(url, 'paced')}
policies:
  - match: paced
    rate: { per_minute: 1, burst: 1, shared: true, per_tenant: true }
${SHARED_SHARE_POLICIES}`;

let cluster: TestRedisCluster;
let tools: ToolServer;
let a: Replica;
let b: Replica;
beforeAll(async () => {
  cluster = await startRedisCluster(3);
  tools = await startToolServer({ '/capped': json({ ok: true }, 400), '/queued': json({ ok: true }, 250), '/paced': json({ ok: true }) });
  a = await startApp(yaml(tools.url), { redisUrl: cluster.url });
  b = await startApp(yaml(tools.url), { redisUrl: cluster.url });
});
afterAll(() => closeReplicaPair({ redis: cluster, tools, a, b }));
beforeEach(() => tools.received.splice(0));

test("on a Cluster, one tenant's burst over both replicas takes its share only; the other's call runs; the total holds", () =>
  expectBurstKeptToShare([a, b], tools, 'on all dispatch replicas together'));

test("on a Cluster, one tenant's calls waiting for its own share never hold up another tenant's", () => expectWaitersKeptToShare([a, b], tools));

test("on a Cluster, a shared per-tenant rate limit is each tenant's own, for both replicas together", async () => {
  const mine = [await callAs(a, 'acme', 'paced'), await callAs(b, 'acme', 'paced')];
  const theirs = await callAs(b, 'globex', 'paced');
  expect(mine.map((r) => (r.isError ? r.error!.message.replace(/\d+ ms/, 'N ms') : 'ok'))).toEqual([
    'ok',
    'tool "paced" is at its rate limit of 1 call per minute (burst 1) for this tenant on all dispatch replicas together; its next turn is in N ms; this call was not executed',
  ]);
  expect(theirs.isError).toBe(false);
});
