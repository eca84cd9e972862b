// Two tenants on one server (DESIGN 9, issue 10): tenant B tries to replay, read, subscribe to and
// end tenant A's session - same session id, same tool, same arguments - and is refused every time.
// Loop windows, memory, registered tools and stats are per tenant too.
import * as grpc from '@grpc/grpc-js';
import { EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import { loopOp } from '../../src/pipeline';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startToolServer, type ToolServer } from '../helpers/servers';
import { authYaml, bearer, codeOf, startAuthApp, type AuthApp, type TestToken } from './support/auth-app';
import { collectEvents, isTurnEnd } from './support/event-stream';

const A: TestToken = { token: 'tenant-a-token-aaaa', tenant: 'tenant-a', scopes: ['dispatch', 'subscribe', 'admin'] };
const B: TestToken = { token: 'tenant-b-token-bbbb', tenant: 'tenant-b', scopes: ['dispatch', 'subscribe', 'admin'] };
const SESSION = 'shared-session-1';
const CHARGE = { id: 'c1', name: 'charge', arguments: '{"amount":5,"to":"acct-1"}' };

/** Where the two tenants' calls land: one server on the memory store, or two replicas sharing Redis. */
type Mode = 'memory store' | 'redis store, A and B on different replicas';

let tools: ToolServer;
let redis: TestRedis | undefined;
let app: AuthApp;
/** The server tenant B talks to: `app` itself, or a second replica sharing app's Redis. */
let appB: AuthApp;

async function setUp(mode: Mode): Promise<void> {
  let n = 0;
  tools = await startToolServer({
    '/charge': (req, res) => {
      n++;
      res.writeHead(200).end(`#${n} charged ${JSON.stringify((req.body as { arguments: unknown }).arguments)} ${'x'.repeat(400)}`);
    },
    '/lookup': (_req, res) => void res.writeHead(200).end('same answer'),
  });
  const yaml = `tools:
  - name: charge
    effect: side_effect
    max_result_chars: 100
    http: { url: "${tools.url}/charge" }
  - name: lookup
    effect: read_only
    http: { url: "${tools.url}/lookup" }
${authYaml([A, B])}`;
  if (mode === 'memory store') {
    app = appB = await startAuthApp(yaml);
    return;
  }
  redis = await startRedis({ own: true });
  app = await startAuthApp(yaml, { daemon: { redisUrl: redis.url } });
  appB = await startAuthApp(yaml, { daemon: { redisUrl: redis.url } });
}

async function tearDown(): Promise<void> {
  if (appB !== app) await appB.close();
  await app.close();
  await tools.close();
  await redis?.close();
  redis = undefined;
}

const asA = bearer(A.token);
const asB = bearer(B.token);

describe.each<Mode>(['memory store', 'redis store, A and B on different replicas'])('%s', (mode) => {
  beforeAll(() => setUp(mode));
  afterAll(tearDown);

  test('tenant B is refused replay, read, subscribe and end of tenant A session', async () => {
    const watchA = collectEvents(app.dispatch, { sessionId: SESSION }, asA);
    const watchB = collectEvents(appB.dispatch, { sessionId: SESSION }, asB);
    const watchBAll = collectEvents(appB.dispatch, {}, asB);
    await Promise.all([watchA.ready(), watchB.ready(), watchBAll.ready()]);
    try {
      const first = (await app.dispatch.dispatch({ sessionId: SESSION, calls: [CHARGE] }, asA)).results[0]!;
      expect(first.isError).toBe(false);
      expect(first.truncated).toBe(true);
      expect(tools.count('/charge')).toBe(1);
      const replayA = (await app.dispatch.dispatch({ sessionId: SESSION, calls: [{ ...CHARGE, id: 'c2' }] }, asA)).results[0]!;
      expect([replayA.idempotentReplay, tools.count('/charge')]).toEqual([true, 1]);

      // Replay: B's identical call runs on its own instead of receiving A's stored result.
      const asBResult = (await appB.dispatch.dispatch({ sessionId: SESSION, calls: [{ ...CHARGE, id: 'b1' }] }, asB)).results[0]!;
      expect([asBResult.idempotentReplay, tools.count('/charge')]).toEqual([false, 2]);
      expect(asBResult.output).toMatch(/^#2 charged/);
      expect(tools.received[1]!.body.idempotency_key).not.toBe(tools.received[0]!.body.idempotency_key);

      // Read: A's handle is A's alone.
      expect((await app.dispatch.readResult({ resultHandle: first.resultHandle }, asA)).text).toMatch(/^#1 charged/);
      expect(await codeOf(appB.dispatch.readResult({ resultHandle: first.resultHandle }, asB))).toBe(grpc.status.NOT_FOUND);

      // End: B ending "its" session of that id leaves A's handle, records and memory intact.
      await appB.dispatch.endSession({ sessionId: SESSION }, asB);
      expect((await app.dispatch.readResult({ resultHandle: first.resultHandle }, asA)).text).toMatch(/^#1 charged/);
      const replayAfter = (await app.dispatch.dispatch({ sessionId: SESSION, calls: [{ ...CHARGE, id: 'c3' }] }, asA)).results[0]!;
      expect([replayAfter.idempotentReplay, tools.count('/charge')]).toEqual([true, 2]);
      expect((await app.app.deps.store.memory({ tenant: A.tenant, sessionId: SESSION })).length).toBeGreaterThan(0);
      // ...while it did clear B's own state: B's identical call runs again.
      const bAgain = (await appB.dispatch.dispatch({ sessionId: SESSION, calls: [{ ...CHARGE, id: 'b2' }] }, asB)).results[0]!;
      expect([bAgain.idempotentReplay, tools.count('/charge')]).toEqual([false, 3]);

      // Subscribe: A's subscriber saw A's calls; B's (to the same session id, or to everything) only B's.
      expect(await watchA.waitFor((e) => e.kind === EventKind.TOOL_POST && e.toolCallId === 'c3')).toBe(true);
      expect(await watchB.waitFor((e) => e.kind === EventKind.TOOL_POST && e.toolCallId === 'b2')).toBe(true);
      expect(await watchBAll.waitFor((e) => e.kind === EventKind.TOOL_POST && e.toolCallId === 'b2')).toBe(true);
      await new Promise((r) => setTimeout(r, 200));
      const callIds = (events: typeof watchA.events) => [...new Set(events.map((e) => e.toolCallId).filter((id) => id !== ''))].sort();
      expect(callIds(watchA.events)).toEqual(['c1', 'c2', 'c3']);
      expect(callIds(watchB.events)).toEqual(['b1', 'b2']);
      expect(callIds(watchBAll.events)).toEqual(['b1', 'b2']);
      expect(watchB.events.filter(isTurnEnd(SESSION))).toHaveLength(2);
    } finally {
      watchA.cancel();
      watchB.cancel();
      watchBAll.cancel();
    }
  });

  test('loop windows and memory are kept per tenant, even for the same session id', async () => {
    const session = 'loop-session';
    const lookup = (id: string) => ({ sessionId: session, calls: [{ id, name: 'lookup', arguments: '{"q":"same"}' }] });
    for (const id of ['1', '2']) await app.dispatch.dispatch(lookup(id), asA);
    const bFirst = (await appB.dispatch.dispatch(lookup('b1'), asB)).results[0]!;
    expect(bFirst.warnings).toEqual([]);
    const aThird = (await app.dispatch.dispatch(lookup('3'), asA)).results[0]!;
    expect(aThird.warnings.join(' ')).toContain('loop warning');

    const tool = app.app.deps.registry.lookup(A.tenant, 'lookup')!;
    const op = loopOp(tool, { q: 'same' });
    const streak = async (tenant: string) => (await app.app.deps.store.beginAttempt({ scope: { tenant, sessionId: session }, op })).streak.count;
    expect([await streak(A.tenant), await streak(B.tenant), await streak('default')]).toEqual([3, 1, 0]);
    const memory = async (tenant: string) => (await app.app.deps.store.memory({ tenant, sessionId: session })).length;
    expect([await memory(A.tenant), await memory(B.tenant)]).toEqual([3, 1]);
  });

  test('tools registered by one tenant are invisible to, and cannot be removed by, another', async () => {
    await app.registry.registerTools({ tools: [{ name: 'a_secret_tool', executor: { case: 'builtin', value: { name: 'echo' } } }] }, asA);
    // On two replicas, wait until the registration has reached B's replica (A sees it there).
    for (let i = 0; i < 60 && !(await appB.registry.listTools({}, asA)).tools.some((t) => t.name === 'a_secret_tool'); i++) await new Promise((r) => setTimeout(r, 50));
    expect((await appB.registry.listTools({}, asA)).tools.map((t) => t.name)).toContain('a_secret_tool');
    expect((await appB.registry.listTools({}, asB)).tools.map((t) => t.name)).not.toContain('a_secret_tool');
    expect((await appB.registry.removeTool({ name: 'a_secret_tool' }, asB)).removed).toBe(false);
    const res = (await appB.dispatch.dispatch({ sessionId: 'x', calls: [{ id: 'c', name: 'a_secret_tool', arguments: '{}' }] }, asB)).results[0]!;
    expect(JSON.parse(res.output)).toMatchObject({ kind: 'UNKNOWN_TOOL' });
    expect((await app.registry.listTools({}, asA)).tools.map((t) => t.name)).toContain('a_secret_tool');
  });

  test("GetToolStats on one server reports a tenant's own calls only", async () => {
    const callsOf = (r: Awaited<ReturnType<typeof app.registry.getToolStats>>) => Number(r.stats.find((s) => s.tool === 'lookup')?.calls ?? 0n);
    const bCallsOn = async (server: AuthApp) => callsOf(await server.registry.getToolStats({ tool: 'lookup' }, asB));
    // On two replicas, B's earlier call on its own replica reaches A's replica with B's next stats
    // flush (every second): wait until both replicas agree on B's count before taking it.
    for (let i = 0; i < 60 && (await bCallsOn(app)) !== (await bCallsOn(appB)); i++) await new Promise((r) => setTimeout(r, 50));
    const bBefore = await bCallsOn(app);
    expect(bBefore).toBe(await bCallsOn(appB));
    const aBefore = callsOf(await app.registry.getToolStats({ tool: 'lookup' }, asA));
    await app.dispatch.dispatch({ sessionId: 'stats', calls: [1, 2, 3].map((i) => ({ id: `s${i}`, name: 'lookup', arguments: `{"q":"${i}"}` })) }, asA);
    expect(callsOf(await app.registry.getToolStats({ tool: 'lookup' }, asA))).toBe(aBefore + 3);
    expect(await bCallsOn(app)).toBe(bBefore);
  });
});
