import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorKind, type ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { createDispatchClient, createRegistryClient } from '../../src/client';
import { startDaemon, type Daemon } from '../helpers/daemon';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startToolServer, type ToolServer } from '../helpers/servers';

/** Sessions are unique per run, so a reused REDIS_URL server holds nothing of an earlier run. */
const RUN = randomUUID().slice(0, 8);

jest.setTimeout(90_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Two dispatchd processes sharing one Redis, each with its clients. */
interface Replica {
  readonly daemon: Daemon;
  readonly dispatch: ReturnType<typeof createDispatchClient>;
  readonly registry: ReturnType<typeof createRegistryClient>;
}

let redis: TestRedis;
let tools: ToolServer;
let dir: string;
let replicas: Replica[] = [];
let charged = 0;
let hangs = 0;

beforeAll(async () => {
  redis = await startRedis();
  tools = await startToolServer({
    '/charge': async (_req, res) => {
      charged++;
      await sleep(500);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ charge: `ch_${charged}` }));
    },
    // The first call never answers (its replica is killed meanwhile); later ones answer at once.
    '/hang': (_req, res) => {
      hangs++;
      if (hangs > 1) res.writeHead(200).end(`ran ${hangs}`);
    },
  });
  dir = mkdtempSync(join(tmpdir(), 'dispatch-replicas-'));
  const config = join(dir, 'tools.yaml');
  writeFileSync(
    config,
    `tools:
  - name: charge
    effect: side_effect
    timeout_ms: 10000
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/charge" }
  - name: provision
    effect: side_effect
    timeout_ms: 1000
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/hang" }
`,
  );
  const daemons = await Promise.all([0, 1].map(() => startDaemon(['--redis', redis.url, '--config', config])));
  replicas = daemons.map((daemon) => {
    const address = `127.0.0.1:${daemon.port}`;
    return { daemon, dispatch: createDispatchClient(address), registry: createRegistryClient(address) };
  });
});

afterAll(async () => {
  for (const r of replicas) {
    r.dispatch.close();
    r.registry.close();
    if (r.daemon.child.exitCode === null && r.daemon.child.signalCode === null) {
      r.daemon.child.kill('SIGTERM');
      const timer = setTimeout(() => r.daemon.child.kill('SIGKILL'), 5000);
      await r.daemon.exited;
      clearTimeout(timer);
    }
  }
  await tools?.close();
  await redis?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const callOn = async (replica: Replica, sessionId: string, id: string, name: string, args: string): Promise<ToolResult> =>
  (await replica.dispatch.dispatch({ sessionId, calls: [{ id, name, arguments: args }] })).results[0]!;

test('200 concurrent identical side-effecting calls over two replicas run the tool once', async () => {
  const results = await Promise.all(
    Array.from({ length: 200 }, (_, i) => callOn(replicas[i % 2]!, `${RUN}-pay-1`, `call_${i}`, 'charge', i % 3 === 0 ? '{"amount":5,"to":"acct-1"}' : '{"to":"acct-1","amount":5}')),
  );
  expect(charged).toBe(1);
  expect(tools.count('/charge')).toBe(1);
  const executed = results.filter((r) => !r.isError && !r.idempotentReplay);
  const replayed = results.filter((r) => !r.isError && r.idempotentReplay);
  const inProgress = results.filter((r) => r.isError && r.error?.kind === ErrorKind.IN_PROGRESS);
  expect(executed).toHaveLength(1);
  expect(executed[0]!.output).toBe('{"charge":"ch_1"}');
  expect(replayed.length + inProgress.length).toBe(199);
  for (const r of replayed) expect(r.output).toBe('{"charge":"ch_1"}');
  expect(inProgress.length).toBeGreaterThan(0);
  expect(JSON.parse(inProgress[0]!.output)).toMatchObject({ error: true, tool: 'charge', kind: 'IN_PROGRESS' });
  const later = await Promise.all([0, 1].map((i) => callOn(replicas[i]!, `${RUN}-pay-1`, `later_${i}`, 'charge', '{"amount":5,"to":"acct-1"}')));
  for (const r of later) expect(r).toMatchObject({ isError: false, idempotentReplay: true, output: '{"charge":"ch_1"}' });
  expect(tools.count('/charge')).toBe(1);
});

test('a tool registered on one replica is served and removed through the other', async () => {
  const [a, b] = replicas as [Replica, Replica];
  await a.registry.registerTools({ tools: [{ name: `shared_charge_${RUN}`, effect: Effect.SIDE_EFFECT, inputSchema: '{"type":"object"}', executor: { case: 'http', value: { url: `${tools.url}/charge` } } }] });
  const deadline = Date.now() + 5000;
  while (!(await b.registry.listTools({})).tools.some((t) => t.name === `shared_charge_${RUN}`) && Date.now() < deadline) await sleep(50);
  const first = await callOn(b, `${RUN}-pay-2`, 'x1', `shared_charge_${RUN}`, '{"amount":1}');
  expect(first).toMatchObject({ isError: false, idempotentReplay: false });
  expect(await callOn(a, `${RUN}-pay-2`, 'x2', `shared_charge_${RUN}`, '{"amount":1}')).toMatchObject({ isError: false, idempotentReplay: true, output: first.output });
  expect(await b.registry.removeTool({ name: `shared_charge_${RUN}` })).toMatchObject({ removed: true });
  while ((await a.registry.listTools({})).tools.some((t) => t.name === `shared_charge_${RUN}`) && Date.now() < deadline + 5000) await sleep(50);
  expect(await callOn(a, `${RUN}-pay-2`, 'x3', `shared_charge_${RUN}`, '{"amount":1}')).toMatchObject({ isError: true, error: { kind: ErrorKind.UNKNOWN_TOOL } });
});

test('a replica killed mid-call leaves IN_PROGRESS until the lease ends; then the key is claimed again', async () => {
  const [a, b] = replicas as [Replica, Replica];
  const args = '{"server":"web-1"}';
  void callOn(a, `${RUN}-ops-1`, 'p1', 'provision', args).catch(() => undefined);
  const deadline = Date.now() + 5000;
  while (hangs === 0 && Date.now() < deadline) await sleep(5);
  const claimedAt = tools.received.find((r) => r.path === '/hang')!.start;
  a.daemon.child.kill('SIGKILL');
  await a.daemon.exited;
  // The lease is the tool's timeout (1 s) plus the pipeline's 5 s margin.
  const leaseEnd = claimedAt + 6000;
  const seen: { at: number; kind: string }[] = [];
  let result: ToolResult | undefined;
  for (let i = 0; i < 60 && Date.now() < leaseEnd + 4000; i++) {
    result = await callOn(b, `${RUN}-ops-1`, `p${i + 2}`, 'provision', args);
    seen.push({ at: Date.now() - claimedAt, kind: result.isError ? ErrorKind[result.error!.kind] : 'OK' });
    if (!result.isError) break;
    await sleep(250);
  }
  const held = seen.filter((s) => s.kind === 'IN_PROGRESS');
  expect(seen.slice(0, -1).every((s) => s.kind === 'IN_PROGRESS')).toBe(true);
  expect(held[held.length - 1]!.at).toBeGreaterThan(5000);
  expect(result).toMatchObject({ isError: false, idempotentReplay: false, output: 'ran 2' });
  expect(seen[seen.length - 1]!.at).toBeGreaterThanOrEqual(5900);
  expect(seen[seen.length - 1]!.at).toBeLessThan(8000);
  expect(hangs).toBe(2);
});
