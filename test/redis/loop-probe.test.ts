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

let tools: ToolServer;
let redis: TestRedis;
/** How long the tool takes to answer: the concurrent calls overlap the probe. */
const ANSWER_MS = 300;
const COOLDOWN_MS = 400;

beforeAll(async () => {
  tools = await startToolServer({
    '/bad': (_req, res) => void setTimeout(() => res.writeHead(400).end('no such symbol'), ANSWER_MS),
  });
  redis = await startRedis({ own: true });
});
afterAll(async () => {
  await tools?.close();
  await redis?.close();
});

const yaml = () => `
tools:
  - name: bad
    effect: read_only
    skip_memoize: true
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/bad" }
    loop: { failure_warn_threshold: 2, failure_block_threshold: 3, block_cooldown_ms: ${COOLDOWN_MS} }
`;

/** Every plugin, observed by a recording observer: no shared stats, so no other script runs on Redis. */
const factories = PLUGINS.map((factory) => (factory === observabilityPlugin ? async () => ({ name: 'recording-observer', observer: recordingObserver().observer }) : factory));

type App = Awaited<ReturnType<typeof startApp>>;
const callOn = async (d: App, session: string, turn: number) =>
  (await d.dispatch.dispatch({ sessionId: session, turn, calls: [{ id: `c${turn}`, name: 'bad', arguments: '{"symbol":"ACME"}' }] })).results[0]!;
type Result = Awaited<ReturnType<typeof callOn>>;
const kindOf = (r: Result) => (r.error ? ErrorKind[r.error.kind] : 'ok');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each([
  ['memory', 1],
  ['redis', 2],
] as const)('%s store, %d replica(s)', (store, replicas) => {
  let apps: App[] = [];
  beforeEach(async () => {
    apps = [];
    for (let i = 0; i < replicas; i++) apps.push(await startApp(yaml(), store === 'redis' ? { redisUrl: redis.url } : {}, factories));
  });
  afterEach(async () => {
    for (const app of apps) await app.close();
  });

  test('after the cool-down, 6 calls at once run one probe; the others are refused LOOP_BLOCKED for at most 1 s; the probe failing blocks anew', async () => {
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
  });

  if (store === 'redis') {
    test('the probe takes no extra round trip: the call costs its two EVALSHA', async () => {
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
    });
  }
});
