// Two tenants' workers hosting a tool of the same name (issue 7 with issue 10): each tenant's calls
// reach its own workers only, on one server and across two replicas sharing Redis; once a
// tenant's workers are gone its calls fail UNAVAILABLE (phase before) instead of reaching the
// other tenant's worker, which stays untouched.
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { authYaml, bearer, startAuthApp, type AuthApp, type TestToken } from '../security/support/auth-app';
import { echoAnswer, eventually, startWorker, type TestWorker } from '../workers/worker-harness';

jest.setTimeout(30_000);

const A: TestToken = { token: 'workers-tenant-a-token', tenant: 'tenant-a', scopes: ['dispatch', 'worker'] };
const B: TestToken = { token: 'workers-tenant-b-token', tenant: 'tenant-b', scopes: ['dispatch', 'worker'] };
const CALC = { name: 'calc', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY };
const auth = (t: TestToken) => ({ authorization: `Bearer ${t.token}` });

let redis: TestRedis;
let one: AuthApp;
let two: AuthApp;
const workers: TestWorker[] = [];

beforeAll(async () => {
  redis = await startRedis({ own: true });
  const yaml = `tools: []\n${authYaml([A, B])}`;
  one = await startAuthApp(yaml, { daemon: { redisUrl: redis.url } });
  two = await startAuthApp(yaml, { daemon: { redisUrl: redis.url } });
});
afterAll(async () => {
  for (const w of workers) w.disconnect();
  await two.close();
  await one.close();
  await redis.close();
});

const host = (app: AuthApp, tenant: TestToken, id: string) => {
  const w = startWorker(app.address, { id, tools: [CALC], answer: echoAnswer(id), metadata: auth(tenant) });
  workers.push(w);
  return w;
};
const hosts = async (app: AuthApp, tenant: TestToken) => (await app.registry.listTools({}, bearer(tenant.token))).tools.some((t) => t.name === 'calc');
let n = 0;
const call = async (app: AuthApp, tenant: TestToken) =>
  (await app.dispatch.dispatch({ sessionId: `s${n++}`, calls: [{ id: 'c', name: 'calc', arguments: `{"n":${n}}` }] }, bearer(tenant.token))).results[0]!;
const workerOf = (output: string) => (JSON.parse(output) as { worker: string }).worker;

test("each tenant's calls reach its own worker of that name, on either replica; a tenant without workers gets UNAVAILABLE, never another's", async () => {
  const wa = host(one, A, 'worker-of-a');
  await eventually(() => hosts(one, A), 5_000, "A's calc on replica one");
  const wb = host(one, B, 'worker-of-b');
  await eventually(() => hosts(one, B), 5_000, "B's calc on replica one");
  await eventually(async () => (await hosts(two, A)) && (await hosts(two, B)), 5_000, 'both calcs on replica two');

  for (const app of [one, two]) {
    for (let i = 0; i < 3; i++) {
      const ra = await call(app, A);
      const rb = await call(app, B);
      expect([ra.isError, rb.isError]).toEqual([false, false]);
      expect([workerOf(ra.output), workerOf(rb.output)]).toEqual(['worker-of-a', 'worker-of-b']);
    }
  }
  const aSeen = wa.assignments.length;

  // B's worker leaves: B's calc stays registered and answers UNAVAILABLE (before) on both replicas.
  wb.disconnect();
  await eventually(async () => (await call(one, B)).error?.kind === ErrorKind.UNAVAILABLE, 5_000, "B's calc without a worker");
  for (const app of [one, two]) {
    const rb = await call(app, B);
    expect(rb.isError).toBe(true);
    expect(rb.error?.kind).toBe(ErrorKind.UNAVAILABLE);
    expect(await hosts(app, B)).toBe(true);
  }
  expect(wa.assignments.length).toBe(aSeen);
  // A's worker still serves A on both replicas.
  for (const app of [one, two]) expect(workerOf((await call(app, A)).output)).toBe('worker-of-a');
});
