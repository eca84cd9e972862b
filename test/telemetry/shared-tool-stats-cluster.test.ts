import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-server';
import { startApp } from '../helpers/servers';
import { bearer, tokenEntry } from './metrics-app';

jest.setTimeout(60_000);

type App = Awaited<ReturnType<typeof startApp>>;

const TENANTS = ['acme', 'globex', 'initech', 'umbrella'];
const CONFIG = `
auth:
  tokens:
${TENANTS.map((t) => tokenEntry(t, `tok-${t}`, ['dispatch'])).join('')}tools:
  - name: echo
    effect: read_only
    builtin: { name: echo }
`;
const savedFlush = process.env.DISPATCH_STATS_FLUSH_MS;
let cluster: TestRedisCluster;
let apps: App[] = [];

beforeAll(async () => {
  process.env.DISPATCH_STATS_FLUSH_MS = '50';
  cluster = await startRedisCluster(3);
  apps = await Promise.all([0, 1].map(() => startApp(CONFIG, { redisUrl: cluster.url })));
});

afterAll(async () => {
  if (savedFlush === undefined) delete process.env.DISPATCH_STATS_FLUSH_MS;
  else process.env.DISPATCH_STATS_FLUSH_MS = savedFlush;
  for (const app of apps) await app.close();
  await cluster?.close();
});

test('on a Redis Cluster, every tenant’s counts (hashes in different slots) flush and are read by the other replica', async () => {
  const [a, b] = apps as [App, App];
  for (const [i, tenant] of TENANTS.entries()) {
    for (let n = 0; n <= i; n++) await a.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'echo', arguments: `{"n":${n}}` }] }, bearer(`tok-${tenant}`));
  }
  const callsSeenByB = async () => Promise.all(TENANTS.map(async (t) => Number((await b.registry.getToolStats({ tool: 'echo' }, bearer(`tok-${t}`))).stats[0]!.calls)));
  const deadline = Date.now() + 10_000;
  let seen = await callsSeenByB();
  while (seen.join() !== '1,2,3,4' && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    seen = await callsSeenByB();
  }
  expect(seen).toEqual([1, 2, 3, 4]);
});
