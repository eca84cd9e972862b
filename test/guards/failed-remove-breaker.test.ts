import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { createBreakers, DEFAULT_BREAKER_SETTINGS } from '../../src/guards';
import { useRedisApp } from '../helpers/redis-app';

// A RemoveTool that fails leaves the tool registered, and its breaker with it. The breaker went
// as the registry told its listeners of the removal, before the removal's Redis write was known
// to have failed: the tool stayed, its open breaker was dropped, and the next call reached the
// failing backend. A real Redis refuses the write (min-replicas-to-write 1); the full app over
// real gRPC, a real HTTP tool.

jest.setTimeout(30_000);

const env = useRedisApp({
  routes: { '/down': (_req, res) => void res.writeHead(503).end('down'), '/up': (_req, res) => void res.writeHead(200).end('fine') },
  config: () => 'tools: []\n',
});

const register = (path: string) =>
  env.app.registry.registerTools({ tools: [{ name: 'flaky', effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', retry: { maxAttempts: 1 }, executor: { case: 'http', value: { url: `${env.tools.url}${path}`, headers: {} } } }], replace: true });
let n = 0;
const call = async () => (await env.app.dispatch.dispatch({ sessionId: 's', calls: [{ id: `c${++n}`, name: 'flaky', arguments: JSON.stringify({ n }) }] })).results[0]!;
const kindOf = (result: Awaited<ReturnType<typeof call>>) => (result.error ? ErrorKind[result.error.kind] : 'ok');

test('a RemoveTool that fails keeps the open breaker of the tool it leaves registered', async () => {
  const { app, tools, redis } = env;
  await register('/down');
  for (let i = 0; i < 5; i++) await call();
  expect(kindOf(await call())).toBe('BREAKER_OPEN');
  const hits = tools.count('/down');
  redis.cli('CONFIG', 'SET', 'min-replicas-to-write', '1');
  try {
    await expect(app.registry.removeTool({ name: 'flaky' })).rejects.toThrow(/not removed/);
  } finally {
    redis.cli('CONFIG', 'SET', 'min-replicas-to-write', '0');
  }
  expect((await app.registry.listTools({})).tools.map((t) => t.name)).toEqual(['flaky']);
  await new Promise((r) => setTimeout(r, 100));
  expect(kindOf(await call())).toBe('BREAKER_OPEN');
  expect(tools.count('/down')).toBe(hits);
});

test('once RemoveTool succeeds, the breaker goes: the name registered again starts closed', async () => {
  await env.app.registry.removeTool({ name: 'flaky' });
  await register('/up');
  expect(kindOf(await call())).toBe('ok');
});

test('a breaker forgotten while its tool is still there goes at its first use once the tool is gone', () => {
  const breakers = createBreakers({ settingsFor: () => ({ ...DEFAULT_BREAKER_SETTINGS, consecutiveFailures: 1 }) });
  try {
    breakers.gate.record('t', breakers.gate.tryAcquire('t', 1000)!, { ok: false, counts: true, durationMs: 0 });
    let gone = false;
    breakers.forget('t', () => gone);
    expect(breakers.gate.isOpen('t')).toBe(true);
    expect(breakers.state('t')).toBe('open');
    gone = true;
    expect(breakers.gate.isOpen('t')).toBe(false);
    expect(breakers.gate.tryAcquire('t', 1000)).toBeDefined();
  } finally {
    breakers.close();
  }
});
