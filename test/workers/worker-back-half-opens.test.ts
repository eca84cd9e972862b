import Redis from 'ioredis';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { replicasSharingRedis, startWorkerApp, type WorkerApp } from './worker-app';
import { echoAnswer, eventually } from './worker-harness';

// Calls that found no worker for a tool count for its breaker (a worker gone is the tool's
// outage), so during a worker restart with traffic the breaker opened, and then refused the new
// worker's calls BREAKER_OPEN for up to half_open_after_ms (30 s here) after it was back. Now a
// worker hosting the tool connecting, to this replica or to another, half-opens the breaker: the
// next call is its probe.

const toolNamed = (name: string) => ({ name, inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY, timeoutMs: 5_000, retry: { maxAttempts: 1 } });
const POLICY = 'policies:\n  - { match: [w_back, w_missed, w_deaf, w_own, w_new], breaker: { consecutive_failures: 2, half_open_after_ms: 30000 } }\n';
let tool = toolNamed('w_back');
let calls = 0;
const call = (t: WorkerApp) => t.dispatch.dispatch({ sessionId: `s${++calls}`, calls: [{ id: 'c', name: tool.name, arguments: `{"n":${calls}}` }] }).then((r) => r.results[0]!);
const listed = async (t: WorkerApp) => (await t.registry.listTools({})).tools.some((x) => x.name === tool.name);

/** Calls through `via` until its breaker of w_back refuses: every call before found no worker. */
async function openBreaker(via: WorkerApp): Promise<void> {
  for (let i = 0; i < 10; i++) {
    const result = await call(via);
    if (result.error?.kind === ErrorKind.BREAKER_OPEN) return;
    expect(result.error?.message).toMatch(new RegExp(`^no worker is connected (any longer )?for tool "${tool.name}"`));
  }
  throw new Error('the breaker did not open');
}

/** Connects worker `id` to `host`, then calls through `via` until a call succeeds; the ms that took. */
async function backAfter(host: WorkerApp, via: WorkerApp, id: string): Promise<number> {
  const started = Date.now();
  await host.worker({ id, tools: [tool], answer: echoAnswer(id) });
  await reachesWorker(via, id);
  return Date.now() - started;
}

/** Calls through `via` until one reaches worker `id` (up to 5 s); the ms that took. */
async function reachesWorker(via: WorkerApp, id: string): Promise<number> {
  const started = Date.now();
  const refused: string[] = [];
  await eventually(async () => {
    const result = await call(via);
    if (result.isError) refused.push(result.error!.message);
    return !result.isError && JSON.parse(result.output).worker === id;
  }, 5_000, `a call through to reach worker ${id}`).catch((error: Error) => {
    throw new Error(`${error.message} (last refused: ${refused.slice(-1)[0]})`);
  });
  return Date.now() - started;
}

describe('a tool whose breaker opened while no worker hosted it', () => {
  let t: WorkerApp;
  beforeEach(async () => {
    t = await startWorkerApp({}, { yaml: POLICY });
  });
  afterEach(() => t.close());

  test('takes calls as soon as a worker for it connects, not after half_open_after_ms', async () => {
    const first = await t.worker({ id: 'first', tools: [tool], answer: echoAnswer('first') });
    expect((await call(t)).isError).toBe(false);
    first.disconnect();
    await first.ended;
    await openBreaker(t);
    expect(await backAfter(t, t, 'second')).toBeLessThan(5_000);
  });

  test('a probe that fails opens it again for half_open_after_ms', async () => {
    const first = await t.worker({ id: 'first', tools: [tool], answer: echoAnswer('first') });
    first.disconnect();
    await first.ended;
    await openBreaker(t);
    // A worker that answers every call with a crash-like failure: it drops its stream.
    const flaky = await t.worker({ id: 'flaky', tools: [tool], answer: () => (flaky.disconnect(), undefined) });
    const probe = await call(t);
    expect(probe.error?.kind).not.toBe(ErrorKind.BREAKER_OPEN);
    expect(probe.isError).toBe(true);
    const after = await call(t);
    expect(after.error?.kind).toBe(ErrorKind.BREAKER_OPEN);
    expect(after.error?.retryAfterMs).toBeGreaterThan(25_000);
  });
});

describe('replicas sharing Redis', () => {
  const replicas = replicasSharingRedis({ advertiseIntervalMs: 200, routeTtlMs: 1_000 }, { yaml: POLICY });

  test("a worker connecting to one replica half-opens the other's breaker of its tool", async () => {
    const { a, b } = replicas;
    const first = await a.worker({ id: 'first', tools: [tool], answer: echoAnswer('first') });
    await eventually(() => listed(b), 5_000, 'the tool on replica b');
    await eventually(async () => !(await call(b)).isError, 5_000, 'a call through b to reach the worker on a');
    first.disconnect();
    await first.ended;
    // a withdraws its route (else it lapses, routeTtlMs): b's calls then find no worker, and open its breaker.
    await eventually(async () => (await call(b)).error?.kind === ErrorKind.BREAKER_OPEN, 5_000, "b's breaker to open");
    expect(await backAfter(a, b, 'second')).toBeLessThan(5_000);
  });

  test("a worker that connected to one replica while the other's subscription was down half-opens its breaker once it subscribes again", async () => {
    const { a, b, redis } = replicas;
    tool = toolNamed('w_missed');
    const admin = new Redis(redis.url, { maxRetriesPerRequest: 0 });
    try {
      const first = await a.worker({ id: 'first', tools: [tool], answer: echoAnswer('first') });
      await eventually(() => listed(b), 5_000, 'the tool on replica b');
      first.disconnect();
      await first.ended;
      await eventually(async () => (await call(b)).error?.kind === ErrorKind.BREAKER_OPEN, 5_000, "b's breaker to open");
      // Every subscription drops and none can reconnect (no connection is taken past maxclients):
      // a's announcement of the worker below reaches no subscriber.
      await admin.config('SET', 'maxclients', '1');
      await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
      await a.worker({ id: 'second', tools: [tool], answer: echoAnswer('second') });
      await eventually(async () => (await admin.keys(`dispatch:worker:route:*:${tool.name}`)).length > 0, 5_000, "a's route of the tool");
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await call(b)).error?.kind).toBe(ErrorKind.BREAKER_OPEN);
      await admin.config('SET', 'maxclients', '10000');
      // b subscribes again (its reconnection delay is 1 s at most), learns the worker is hosted, half-opens.
      await reachesWorker(b, 'second');
    } finally {
      await admin.config('SET', 'maxclients', '10000').catch(() => undefined);
      admin.disconnect();
    }
  });
});

// A replica deaf (its subscriptions lost) when its worker connects announces it unheard; and a
// peer whose probe went to it then found no one listening, and opened its breaker again for
// half_open_after_ms (a flake of the test above: b subscribed again before a). Once subscribed
// again, it announces what its workers host.
describe('a replica that was deaf while its worker connected', () => {
  const replicas = replicasSharingRedis({ advertiseIntervalMs: 200, routeTtlMs: 1_000 }, { yaml: POLICY, aUser: 'host' });
  let admin: Redis;
  beforeAll(() => void (admin = new Redis(replicas.redis.url, { maxRetriesPerRequest: 0 })));
  afterAll(() => admin?.disconnect());

  /** Connects worker `id` to a while Redis drops a's subscriptions and refuses its PUBLISHes: its announcement of the worker is lost. */
  async function connectWhileDeaf(id: string): Promise<void> {
    replicas.redis.cli('ACL', 'SETUSER', 'host', 'resetchannels');
    await replicas.a.worker({ id, tools: [tool], answer: echoAnswer(id) });
    await eventually(async () => (await admin.keys(`dispatch:worker:route:*:${tool.name}`)).length > 0, 5_000, "a's route of the tool");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await call(replicas.b)).error?.kind).toBe(ErrorKind.BREAKER_OPEN);
  }

  test('announces its workers once it subscribes again, and the other replicas half-open', async () => {
    const { a, b, redis } = replicas;
    tool = toolNamed('w_deaf');
    const first = await a.worker({ id: 'first', tools: [tool], answer: echoAnswer('first') });
    await eventually(() => listed(b), 5_000, 'the tool on replica b');
    first.disconnect();
    await first.ended;
    await eventually(async () => (await call(b)).error?.kind === ErrorKind.BREAKER_OPEN, 5_000, "b's breaker to open");
    await connectWhileDeaf('second');
    redis.cli('ACL', 'SETUSER', 'host', 'allchannels');
    // a subscribes again (its reconnection delay is 1 s at most) and announces: b half-opens, long before 30 s.
    expect(await reachesWorker(b, 'second')).toBeLessThan(5_000);
  });

  // Told again is no new chance for a tool whose own failures opened the breaker: before, each
  // time a replica subscribed again, the others half-opened it, a probe of a failing tool each.
  test("announces them as hosted still: another replica's breaker that the tool's own failures opened stays open", async () => {
    const { a, b, redis } = replicas;
    tool = { ...toolNamed('w_own'), timeoutMs: 300 };
    await a.worker({ id: 'mute', tools: [tool], answer: () => undefined });
    await eventually(() => listed(b), 5_000, 'the tool on replica b');
    await eventually(async () => (await call(b)).error?.kind === ErrorKind.BREAKER_OPEN, 10_000, "b's breaker to open on the tool's timeouts");
    const heard = await announcements(redis.url);
    try {
      redis.cli('ACL', 'SETUSER', 'host', 'resetchannels');
      await new Promise((resolve) => setTimeout(resolve, 300));
      redis.cli('ACL', 'SETUSER', 'host', 'allchannels');
      await eventually(() => heard.messages.some((m) => m.hosted === tool.name), 5_000, 'a to announce its worker once it subscribed again');
      expect(heard.messages.filter((m) => m.hosted === tool.name)).toEqual([expect.objectContaining({ again: true })]);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await call(b)).error?.kind).toBe(ErrorKind.BREAKER_OPEN);
    } finally {
      heard.close();
    }
  });

  test('announces a worker that connected while its announcement was refused as one that connected: that breaker half-opens', async () => {
    const { a, b, redis } = replicas;
    tool = { ...toolNamed('w_new'), timeoutMs: 300 };
    const mute = await a.worker({ id: 'mute', tools: [tool], answer: () => undefined });
    await eventually(() => listed(b), 5_000, 'the tool on replica b');
    await eventually(async () => (await call(b)).error?.kind === ErrorKind.BREAKER_OPEN, 10_000, "b's breaker to open on the tool's timeouts");
    mute.disconnect();
    await mute.ended;
    await connectWhileDeaf('second');
    redis.cli('ACL', 'SETUSER', 'host', 'allchannels');
    expect(await reachesWorker(b, 'second')).toBeLessThan(5_000);
  });
});

/** The `hosted` announcements published on the worker specs channel from now on, until closed. */
async function announcements(url: string): Promise<{ readonly messages: { hosted?: string; again?: boolean }[]; close(): void }> {
  const sub = new Redis(url, { maxRetriesPerRequest: 0 });
  const messages: { hosted?: string; again?: boolean }[] = [];
  sub.on('message', (_channel: string, text: string) => {
    const message = JSON.parse(text) as { hosted?: string; again?: boolean };
    if (message.hosted !== undefined) messages.push(message);
  });
  await sub.subscribe('dispatch:worker:specs');
  return { messages, close: () => sub.disconnect() };
}
