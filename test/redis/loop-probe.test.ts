import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { PLUGINS } from '../../src/app';
import { observabilityPlugin } from '../../src/app/plugins/observability-plugin';
import { recordingObserver } from '../guards/helpers';
import { monitorRedis, startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';

// DESIGN section 6: after LOOP_BLOCKED's cool-down (loop.block_cooldown_ms) the call runs once
// more, a probe, and only once: concurrent calls on one replica, or on replicas sharing Redis,
// each ran their own probe (6 calls at once: the failing tool was called 6 times). Now the first
// call takes the probe inside the store's first step (still 2 EVALSHA a call with Redis), the
// others are refused LOOP_BLOCKED with a short retry_after_ms. Real HTTP tool, both stores.

jest.setTimeout(60_000);

let redis: TestRedis;
/** How long the tool takes to answer: the concurrent calls overlap the probe. */
const ANSWER_MS = 300;
const COOLDOWN_MS = 400;

// Each store runs its tests in order, the two stores at once (most of the time is waiting: the
// tool's answers, cool-downs). Each store has its own tool server, so that neither sees the other's
// calls nor counts them (only the redis store's apps use Redis); each test awaits its store's run of
// it, all started in beforeAll.
const STORES = [
  ['memory', 1],
  ['redis', 2],
] as const;
/** Each store's run of each test (keyed `${store}: ${test}`), started in beforeAll. */
const runs = new Map<string, Promise<void>>();
const toolServers: ToolServer[] = [];
beforeAll(async () => {
  redis = await startRedis({ own: true });
  for (const [store, replicas] of STORES) {
    const tools = await startToolServer({
      '/bad': (_req, res) => void setTimeout(() => res.writeHead(400).end('no such symbol'), ANSWER_MS),
      '/down': (_req, res) => void res.writeHead(500).end('internal: no such symbol'),
    });
    toolServers.push(tools);
    let previous: Promise<unknown> = Promise.resolve();
    for (const [name, body, only] of TESTS) {
      if (only && only !== store) continue;
      const run = previous.then(() => withApps(store, replicas, tools, (apps) => body({ store, replicas, tools, apps })));
      run.catch(() => undefined);
      runs.set(`${store}: ${name}`, run);
      previous = run.catch(() => undefined);
    }
  }
});
afterAll(async () => {
  await Promise.allSettled(runs.values());
  for (const tools of toolServers) await tools.close();
  await redis?.close();
});

const yaml = (tools: ToolServer) => `
tools:
  - name: bad
    effect: read_only
    skip_memoize: true
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/bad" }
    loop: { failure_warn_threshold: 2, failure_block_threshold: 3, block_cooldown_ms: ${COOLDOWN_MS} }
  - name: down
    effect: read_only
    skip_memoize: true
    timeout_ms: 20000
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/down" }
    loop: { failure_warn_threshold: 2, failure_block_threshold: 3, block_cooldown_ms: ${COOLDOWN_MS} }
policies:
  - match: "down"
    breaker: { consecutive_failures: 3, half_open_after_ms: 60000 }
`;

/** Every plugin, observed by a recording observer: no shared stats, so no other script runs on Redis. */
const factories = PLUGINS.map((factory) => (factory === observabilityPlugin ? async () => ({ name: 'recording-observer', observer: recordingObserver().observer }) : factory));

type App = Awaited<ReturnType<typeof startApp>>;

/** Runs `body` on `replicas` apps of `store`, fresh for it, closed after it. */
async function withApps(store: string, replicas: number, tools: ToolServer, body: (apps: App[]) => Promise<void>): Promise<void> {
  const apps: App[] = [];
  try {
    for (let i = 0; i < replicas; i++) apps.push(await startApp(yaml(tools), store === 'redis' ? { redisUrl: redis.url } : {}, factories));
    await body(apps);
  } finally {
    for (const app of apps) await app.close();
  }
}
const callOn = async (d: App, session: string, turn: number, name = 'bad', signal?: AbortSignal) =>
  (await d.dispatch.dispatch({ sessionId: session, turn, calls: [{ id: `c${turn}`, name, arguments: '{"symbol":"ACME"}' }] }, { signal })).results[0]!;
type Result = Awaited<ReturnType<typeof callOn>>;
const kindOf = (r: Result) => (r.error ? ErrorKind[r.error.kind] : 'ok');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Side {
  readonly store: string;
  readonly replicas: number;
  /** This store's tool server. */
  readonly tools: ToolServer;
  /** `replicas` apps, fresh for the test. */
  readonly apps: App[];
}

/** The tests each store runs, in this order (the last ones: the redis store's only). */
const TESTS: [string, (side: Side) => Promise<void>, 'redis'?][] = [
  ['after the cool-down, 6 calls at once run one probe; the others are refused LOOP_BLOCKED for at most 1 s; the probe failing blocks anew', async ({ store, tools, apps }) => {
    const session = `${store}-probe-${Date.now()}`;
    const before = tools.count('/bad');
    const first: string[] = [];
    for (let n = 1; n <= 4; n++) first.push(kindOf(await callOn(apps[n % apps.length]!, session, n)));
    expect(first).toEqual(['TOOL_ERROR', 'TOOL_ERROR', 'TOOL_ERROR', 'LOOP_BLOCKED']);
    expect(tools.count('/bad') - before).toBe(3);
    await sleep(COOLDOWN_MS + 100);
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => callOn(apps[i % apps.length]!, session, 10 + i)));
    expect(tools.count('/bad') - before).toBe(4);
    expect(results.map(kindOf).sort()).toEqual(['LOOP_BLOCKED', 'LOOP_BLOCKED', 'LOOP_BLOCKED', 'LOOP_BLOCKED', 'LOOP_BLOCKED', 'TOOL_ERROR']);
    for (const refused of results.filter((r) => kindOf(r) === 'LOOP_BLOCKED')) {
      expect(refused.error!.retryAfterMs).toBeGreaterThan(0);
      expect(refused.error!.retryAfterMs).toBeLessThanOrEqual(1000);
      expect(refused.error!.message).toMatch(/^this exact call failed the same way 3 times in a row; another call of it is running once more now to see whether it works, call again in (\d+ ms|1 s)$/);
    }
    // The probe failed the same way: the next call is refused for a whole cool-down again.
    const next = await callOn(apps[0]!, session, 20);
    expect(kindOf(next)).toBe('LOOP_BLOCKED');
    expect(next.error!.retryAfterMs).toBeGreaterThan(COOLDOWN_MS - 200);
    // That newer failure freed the probe: after the next cool-down one call runs again.
    await sleep(next.error!.retryAfterMs + 50);
    expect(kindOf(await callOn(apps[apps.length - 1]!, session, 21))).toBe('TOOL_ERROR');
    expect(tools.count('/bad') - before).toBe(5);
  }],

  ["a probe its breaker refuses (BREAKER_OPEN) is given back: the next call takes it, and runs on a replica whose breaker is closed", async ({ store, replicas, tools, apps }) => {
    const session = `${store}-probe-breaker-${Date.now()}`;
    const [a, b] = [apps[0]!, apps[apps.length - 1]!];
    const before = tools.count('/down');
    const first: string[] = [];
    // The third failure opens a's breaker (60 s); the fourth call is refused for the cool-down.
    for (let n = 1; n <= 4; n++) first.push(kindOf(await callOn(a, session, n, 'down')));
    expect(first).toEqual(['TOOL_ERROR', 'TOOL_ERROR', 'TOOL_ERROR', 'LOOP_BLOCKED']);
    await sleep(COOLDOWN_MS + 100);
    // The probe's call on a: its breaker refuses it after the store's first step took the probe.
    expect(kindOf(await callOn(a, session, 5, 'down'))).toBe('BREAKER_OPEN');
    // Before, the probe stayed held for the tool's timeout + 5 s (25 s): LOOP_BLOCKED "another call
    // of it is running once more now", with nothing running, on every replica.
    const next = await callOn(b, session, 6, 'down');
    expect(kindOf(next)).toBe(replicas === 2 ? 'TOOL_ERROR' : 'BREAKER_OPEN');
    expect(tools.count('/down') - before).toBe(replicas === 2 ? 4 : 3);
  }],

  ['a probe whose call is cancelled while its tool runs records nothing and is given back: the next call runs once more', async ({ store, tools, apps }) => {
    const session = `${store}-probe-cancel-${Date.now()}`;
    const before = tools.count('/bad');
    for (let n = 1; n <= 3; n++) await callOn(apps[0]!, session, n);
    await sleep(COOLDOWN_MS + 100);
    const controller = new AbortController();
    const cancelled = callOn(apps[0]!, session, 4, 'bad', controller.signal).catch((error: unknown) => error);
    await sleep(ANSWER_MS / 3);
    controller.abort();
    expect(String(await cancelled)).toMatch(/cancel/i);
    await sleep(100);
    expect(tools.count('/bad') - before).toBe(4);
    // Before, held for the tool's timeout + 5 s: LOOP_BLOCKED, another call running once more.
    expect(kindOf(await callOn(apps[apps.length - 1]!, session, 5))).toBe('TOOL_ERROR');
    expect(tools.count('/bad') - before).toBe(5);
  }],
  ['a probe whose call is cancelled while Redis answers its first step is given back: the tool never ran, the next call runs once more', async ({ store, tools, apps }) => {
    const session = `${store}-probe-cancel-before-${Date.now()}`;
    const before = tools.count('/bad');
    for (let n = 1; n <= 3; n++) await callOn(apps[0]!, session, n);
    await sleep(COOLDOWN_MS + 100);
    const controller = new AbortController();
    let cancelled: Promise<unknown>;
    redis.signal('SIGSTOP');
    try {
      cancelled = callOn(apps[0]!, session, 4, 'bad', controller.signal).catch((error: unknown) => error);
      await sleep(150);
      controller.abort();
      await sleep(50);
    } finally {
      redis.signal('SIGCONT');
    }
    expect(String(await cancelled)).toMatch(/cancel/i);
    // The first step's answer (the probe taken) arrives after the cancellation; the give-back follows it.
    await sleep(300);
    expect(tools.count('/bad') - before).toBe(3);
    expect(kindOf(await callOn(apps[apps.length - 1]!, session, 5))).toBe('TOOL_ERROR');
    expect(tools.count('/bad') - before).toBe(4);
  }, 'redis'],

  ['the probe takes no extra round trip: the call costs its two EVALSHA', async ({ store, apps }) => {
    const session = `${store}-probe-steps-${Date.now()}`;
    for (let n = 1; n <= 3; n++) await callOn(apps[0]!, session, n);
    await sleep(COOLDOWN_MS + 100);
    const monitor = await monitorRedis(redis.port);
    try {
      const probe = await callOn(apps[0]!, session, 4);
      expect(kindOf(probe)).toBe('TOOL_ERROR');
      await sleep(100);
      expect(monitor.commands().filter((c) => c.startsWith('eval'))).toEqual(['evalsha', 'evalsha']);
    } finally {
      monitor.stop();
    }
  }, 'redis'],
];

describe.each(STORES)('%s store, %d replica(s)', (store) => {
  for (const [name, , only] of TESTS) {
    if (only && only !== store) continue;
    test(name, async () => {
      const run = runs.get(`${store}: ${name}`);
      if (!run) throw new Error(`the ${store} store's run of this test was not started`);
      await run;
    });
  }
});
