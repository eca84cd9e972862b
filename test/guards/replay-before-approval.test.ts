import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { PLUGINS } from '../../src/app';
import { createGuardsPlugin, guardsPlugin } from '../../src/app/plugins/guards-plugin';
import { observabilityPlugin } from '../../src/app/plugins/observability-plugin';
import type { PreHook } from '../../src/guards';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { json, startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { recordingObserver, until } from './helpers';

// A side-effecting call that ran already is answered from its idempotency record before any
// `ask` or `block` is acted on: a client retrying it (its response lost) gets the replay, not a
// second approval request whose denial would say BLOCKED "Do not retry" though the charge was
// made, nor, headless, BLOCKED "needs approval". With the memory store and with Redis.

let tools: ToolServer;
let redis: TestRedis;
beforeAll(async () => {
  tools = await startToolServer({ '/charge': json({ charged: true }) });
  redis = await startRedis({ own: true });
});
afterAll(async () => {
  await tools?.close();
  await redis?.close();
});

const YAML = (url: string) => `
tools:
  - name: charge
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${url}/charge" }
policies:
  - { match: charge, decide: ask, reason: money }
limits: { approval_timeout_ms: 2000 }
`;

async function start(store: 'memory' | 'redis', hook: PreHook) {
  const { observer, events } = recordingObserver();
  const factories = PLUGINS.map((factory) => {
    if (factory === observabilityPlugin) return async () => ({ name: 'recording-observer', observer });
    if (factory === guardsPlugin) return createGuardsPlugin({ preHooks: [hook] });
    return factory;
  });
  const app = await startApp(YAML(tools.url), store === 'redis' ? { redisUrl: redis.url } : {}, factories);
  return { ...app, events };
}

test.each(['memory', 'redis'] as const)('a retry of an approved call that ran is replayed, not asked about nor blocked (%s store)', async (store) => {
  let frozen = false;
  const d = await start(store, () => (frozen ? { action: 'block', reason: 'payments frozen' } : { action: 'allow' }));
  const asks = () => d.events.filter((e) => e.kind === 'APPROVAL_REQUESTED');
  const before = tools.count('/charge');
  try {
    const call = { sessionId: `s-${store}`, interactive: true, calls: [{ id: 'c1', name: 'charge', arguments: '{"amount":5}' }] };
    const first = d.dispatch.dispatch(call);
    await until(() => asks().length === 1);
    await d.dispatch.resolveApproval({ approvalId: asks()[0]!.detail, approve: true });
    expect((await first).results[0]).toMatchObject({ isError: false, output: '{"charged":true}', idempotentReplay: false });
    expect(tools.count('/charge') - before).toBe(1);

    // The client retries (its response was lost): no approval is asked for, the charge is not made again.
    const retry = (await d.dispatch.dispatch(call)).results[0]!;
    expect(retry).toMatchObject({ isError: false, output: '{"charged":true}', idempotentReplay: true });
    expect(asks()).toHaveLength(1);
    const headless = (await d.dispatch.dispatch({ ...call, interactive: false })).results[0]!;
    expect(headless).toMatchObject({ isError: false, output: '{"charged":true}', idempotentReplay: true });

    // A block decided since (a hook, a policy endpoint failing closed) does not deny what was done.
    frozen = true;
    expect((await d.dispatch.dispatch(call)).results[0]).toMatchObject({ isError: false, idempotentReplay: true });
    // A call that never ran is still blocked, or asked about, as before.
    const other = (await d.dispatch.dispatch({ ...call, calls: [{ id: 'c2', name: 'charge', arguments: '{"amount":6}' }] })).results[0]!;
    expect(other.error).toMatchObject({ kind: ErrorKind.BLOCKED, message: 'blocked by policy: payments frozen' });
    frozen = false;
    const unasked = (await d.dispatch.dispatch({ ...call, interactive: false, calls: [{ id: 'c3', name: 'charge', arguments: '{"amount":7}' }] })).results[0]!;
    expect(unasked.error).toMatchObject({ kind: ErrorKind.BLOCKED, message: 'needs approval, and this dispatch is headless: money' });
    expect(tools.count('/charge') - before).toBe(1);
    expect(asks()).toHaveLength(1);
  } finally {
    await d.close();
  }
});
