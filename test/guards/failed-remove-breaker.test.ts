import { create } from '@bufbuild/protobuf';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect, ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import { createBreakers, DEFAULT_BREAKER_SETTINGS } from '../../src/guards';
import { breakerKey } from '../../src/pipeline';
import { createSchemaCompiler, createToolRegistry } from '../../src/registry';
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

test('a breaker stays while its removal is shared and after one that failed, and goes at once when it happened', async () => {
  const breakers = createBreakers({ settingsFor: () => ({ ...DEFAULT_BREAKER_SETTINGS, consecutiveFailures: 1 }) });
  const registry = createToolRegistry(createSchemaCompiler(65_536), () => new Set(['builtin']));
  registry.onRemoved((tenant, name) => breakers.forget(breakerKey({ tenant, name })));
  let share!: (ok: boolean) => void;
  registry.onChange((change) => (change.type === 'remove' ? new Promise<void>((resolve, reject) => (share = (ok) => (ok ? resolve() : reject(new Error('NOREPLICAS'))))) : undefined));
  try {
    registry.register([create(ToolSpecSchema, { name: 't', effect: Effect.READ_ONLY, inputSchema: '{}', executor: { case: 'builtin', value: { name: 'echo' } } })], { tenant: 'acme' });
    breakers.gate.record('acme/t', breakers.gate.tryAcquire('acme/t', 1000)!, { ok: false, counts: true, durationMs: 0 });
    const failing = registry.removeShared('acme', 't');
    expect(breakers.gate.isOpen('acme/t')).toBe(true);
    share(false);
    await expect(failing).rejects.toThrow('NOREPLICAS');
    expect([breakers.gate.isOpen('acme/t'), breakers.gate.size]).toEqual([true, 1]);
    const removing = registry.removeShared('acme', 't');
    expect(breakers.gate.size).toBe(1);
    share(true);
    await expect(removing).resolves.toBe(true);
    expect([breakers.gate.isOpen('acme/t'), breakers.gate.size]).toEqual([false, 0]);
  } finally {
    breakers.close();
  }
});
