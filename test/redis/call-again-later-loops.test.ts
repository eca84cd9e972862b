import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { PLUGINS } from '../../src/app';
import { createGuardsPlugin, guardsPlugin } from '../../src/app/plugins/guards-plugin';
import { observabilityPlugin } from '../../src/app/plugins/observability-plugin';
import { recordingObserver } from '../guards/helpers';
import { monitorRedis, startRedis, type TestRedis } from '../helpers/redis-server';
import { closedPort, startApp, startToolServer, type ToolRoute, type ToolServer } from '../helpers/servers';

// DESIGN section 6: the same call failing the same way 2 times is warned of, 5 times refused
// LOOP_BLOCKED. A call the tool refused to run (429, a 503 with Retry-After) or that could not
// reach it is not failing that way: dispatch told the model to call again later, unchanged, and a
// model that did so 5 times was warned "change the arguments or the approach" from the 2nd answer
// and refused LOOP_BLOCKED from the 6th, once the tool was healthy again, for the session's
// window (24 h). Such failures are not recorded; a tool's real error still is. Real HTTP tools,
// the memory store and a private redis-server.

jest.setTimeout(30_000);

let busy = true;
let tools: ToolServer;
let redis: TestRedis;

/** While `busy`, answers `status` with Retry-After: 30; then 200 with `{"price":42}`. */
const busyRoute = (status: number): ToolRoute => (_req, res) => {
  if (busy) res.writeHead(status, { 'retry-after': '30' }).end('too many requests');
  else res.writeHead(200, { 'content-type': 'application/json' }).end('{"price":42}');
};

beforeAll(async () => {
  tools = await startToolServer({
    '/quote': busyRoute(429),
    '/post': busyRoute(429),
    '/maint': busyRoute(503),
    '/bad': (_req, res) => void res.writeHead(400).end('no such symbol'),
    // 429 while `busy`, else 400.
    '/flip': (_req, res) => void (busy ? res.writeHead(429, { 'retry-after': '30' }).end('too many requests') : res.writeHead(400).end('no such symbol')),
  });
  redis = await startRedis({ own: true });
});
afterAll(async () => {
  await tools?.close();
  await redis?.close();
});
beforeEach(() => {
  busy = true;
});

const tool = (name: string, effect: string, url: string) => `
  - name: ${name}
    effect: ${effect}${effect === 'read_only' ? '\n    skip_memoize: true' : ''}
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${url}" }`;

async function start(store: 'memory' | 'redis') {
  const down = `http://127.0.0.1:${await closedPort()}/down`;
  const yaml = `
policies:
  - { match: [down, maint], breaker: { consecutive_failures: 100 } }
tools:${tool('quote', 'read_only', `${tools.url}/quote`)}${tool('post', 'side_effect', `${tools.url}/post`)}${tool('maint', 'read_only', `${tools.url}/maint`)}${tool('bad', 'read_only', `${tools.url}/bad`)}${tool('flip', 'read_only', `${tools.url}/flip`)}${tool('down', 'read_only', down)}
`;
  const { observer, events } = recordingObserver();
  const factories = PLUGINS.map((factory) => {
    if (factory === observabilityPlugin) return async () => ({ name: 'recording-observer', observer });
    if (factory === guardsPlugin) return createGuardsPlugin();
    return factory;
  });
  const app = await startApp(yaml, store === 'redis' ? { redisUrl: redis.url } : {}, factories);
  return { ...app, events };
}

type App = Awaited<ReturnType<typeof start>>;
const callOn = async (d: App, session: string, name: string, n: number) =>
  (await d.dispatch.dispatch({ sessionId: session, turn: n, calls: [{ id: `c${n}`, name, arguments: '{"symbol":"ACME"}' }] })).results[0]!;
const loopWarnings = (warnings: readonly string[]) => warnings.filter((w) => w.startsWith('loop warning'));

describe.each(['memory', 'redis'] as const)('%s store', (store) => {
  let d: App;
  beforeEach(async () => {
    d = await start(store);
  });
  afterEach(async () => {
    await d?.close();
  });

  test.each([
    ['quote', 'read-only, HTTP 429', '/quote', 'TOOL_ERROR'],
    ['post', 'side-effecting, HTTP 429', '/post', 'TOOL_ERROR'],
    ['maint', 'read-only, HTTP 503 with Retry-After', '/maint', 'TOOL_ERROR'],
  ])('%s (%s): 6 calls told to call again later are neither warned of nor blocked, and the 7th runs once the tool is back', async (name, _what, path, kind) => {
    const session = `${store}-${name}`;
    const before = tools.count(path);
    for (let n = 1; n <= 6; n++) {
      const r = await callOn(d, session, name, n);
      expect({ n, kind: ErrorKind[r.error!.kind], recoverable: r.error!.recoverable, retryAfterMs: r.error!.retryAfterMs }).toEqual({ n, kind, recoverable: true, retryAfterMs: 30_000 });
      expect(loopWarnings(r.warnings)).toEqual([]);
    }
    busy = false;
    const back = await callOn(d, session, name, 7);
    expect(back).toMatchObject({ isError: false, output: '{"price":42}' });
    expect(tools.count(path) - before).toBe(7);
    expect(d.events.filter((e) => e.kind === 'LOOP_WARNING')).toEqual([]);
  });

  test('an unreachable tool (connection refused, not executed) is neither warned of nor blocked', async () => {
    for (let n = 1; n <= 6; n++) {
      const r = await callOn(d, `${store}-down`, 'down', n);
      expect({ n, kind: ErrorKind[r.error!.kind], warnings: loopWarnings(r.warnings) }).toEqual({ n, kind: 'UNAVAILABLE', warnings: [] });
    }
  });

  test("the tool's own error repeated still is: warned at the 2nd, refused LOOP_BLOCKED at the 6th without running", async () => {
    const before = tools.count('/bad');
    const results = [];
    for (let n = 1; n <= 6; n++) results.push(await callOn(d, `${store}-bad`, 'bad', n));
    expect(results.map((r) => ErrorKind[r.error!.kind])).toEqual(['TOOL_ERROR', 'TOOL_ERROR', 'TOOL_ERROR', 'TOOL_ERROR', 'TOOL_ERROR', 'LOOP_BLOCKED']);
    expect(results.map((r) => loopWarnings(r.warnings).length)).toEqual([0, 1, 1, 1, 1, 0]);
    expect(tools.count('/bad') - before).toBe(5);
  });

  test('answers to call again later between the same real failures neither add to their streak nor break it', async () => {
    const session = `${store}-flip`;
    const kinds: string[] = [];
    const warned: number[] = [];
    for (let n = 1; n <= 6; n++) {
      busy = n >= 2 && n <= 4;
      const r = await callOn(d, session, 'flip', n);
      kinds.push(`${ErrorKind[r.error!.kind]} ${r.error!.recoverable}`);
      warned.push(loopWarnings(r.warnings).length);
    }
    expect(kinds).toEqual(['TOOL_ERROR false', 'TOOL_ERROR true', 'TOOL_ERROR true', 'TOOL_ERROR true', 'TOOL_ERROR false', 'TOOL_ERROR false']);
    expect(warned).toEqual([0, 0, 0, 0, 1, 1]);
  });

  if (store === 'redis') {
    test('a call told to call again later still takes its two store steps with Redis, no more (DESIGN section 3, step 8)', async () => {
      await callOn(d, `${store}-steps`, 'post', 1);
      const monitor = await monitorRedis(redis.port);
      try {
        const r = await callOn(d, `${store}-steps`, 'post', 2);
        expect(r.error?.retryAfterMs).toBe(30_000);
        await new Promise((resolve) => setTimeout(resolve, 100));
        // The app here has no shared stats (its observer is the recording one): nothing else runs scripts.
        expect(monitor.commands().filter((c) => c.startsWith('eval'))).toEqual(['evalsha', 'evalsha']);
      } finally {
        monitor.stop();
      }
    });
  }
});
