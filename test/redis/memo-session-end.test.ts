import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';

// Memoized results are a session's (the memo key holds tenant and session): EndSession drops them,
// on the replica that ends the session at once, and on every replica sharing its Redis as the
// announcement reaches it.

type TestApp = Awaited<ReturnType<typeof startApp>>;

let tools: ToolServer;
let redis: TestRedis;
/** While set, the tool server holds its answers until it settles. */
let gate: Promise<void> | undefined;
const apps: TestApp[] = [];
const start = async (redisUrl?: string) => {
  const app = await startApp(
    `
tools:
  - name: lookup
    effect: read_only
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/lookup" }
`,
    { redisUrl },
  );
  apps.push(app);
  return app;
};
const lookup = async (app: TestApp, sessionId: string) => {
  const result = (await app.dispatch.dispatch({ sessionId, calls: [{ id: 'c', name: 'lookup', arguments: '{"q":1}' }] })).results[0]!;
  expect(result.isError).toBe(false);
  return { output: result.output, cached: result.cached };
};

beforeAll(async () => {
  let served = 0;
  tools = await startToolServer({
    '/lookup': async (_req, res) => {
      await gate;
      res.writeHead(200).end(`answer #${++served}`);
    },
  });
  redis = await startRedis({ own: true });
});
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});
afterAll(async () => {
  await tools.close();
  await redis.close();
});

describe.each([
  ['the memory store', false],
  ['the Redis store', true],
])('EndSession drops the memoized results of its session, with %s', (_store, withRedis) => {
  it("on the replica that ends it, before answering; other sessions' stay", async () => {
    const app = await start(withRedis ? redis.url : undefined);
    const first = await lookup(app, 'ended');
    expect(await lookup(app, 'ended')).toEqual({ output: first.output, cached: true });
    const other = await lookup(app, 'other');
    await app.dispatch.endSession({ sessionId: 'ended' });
    const again = await lookup(app, 'ended');
    expect(again.cached).toBe(false);
    expect(again.output).not.toBe(first.output);
    expect(await lookup(app, 'other')).toEqual({ output: other.output, cached: true });
  });

  it('a lookup still running when its session ends is not cached for the next call', async () => {
    const app = await start(withRedis ? redis.url : undefined);
    const asked = tools.count('/lookup');
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    const running = lookup(app, 'in-flight');
    try {
      for (let i = 0; i < 100 && tools.count('/lookup') === asked; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      await app.dispatch.endSession({ sessionId: 'in-flight' });
    } finally {
      open();
      gate = undefined;
    }
    const first = await running;
    const next = await lookup(app, 'in-flight');
    expect(next.cached).toBe(false);
    expect(next.output).not.toBe(first.output);
    expect(tools.count('/lookup')).toBe(asked + 2);
  });
});

test('with Redis, on the other replicas too', async () => {
  const [a, b] = await Promise.all([start(redis.url), start(redis.url)]);
  const first = await lookup(b, 'shared');
  expect(await lookup(b, 'shared')).toEqual({ output: first.output, cached: true });
  await a.dispatch.endSession({ sessionId: 'shared' });
  // Asked again until b has heard: a few times only, as identical results count towards a loop.
  let again = await lookup(b, 'shared');
  for (let i = 0; i < 7 && again.cached; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    again = await lookup(b, 'shared');
  }
  expect(again.cached).toBe(false);
  expect(again.output).not.toBe(first.output);
});
