import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { PLUGINS } from '../../src/app';
import { createGuardsPlugin, guardsPlugin } from '../../src/app/plugins/guards-plugin';
import type { PreHook } from '../../src/guards';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { json, startApp, startToolServer, type ToolServer } from '../helpers/servers';

// A side-effecting call that ran already (its idempotency record exists) and is sent again while
// its tool's breaker is open is answered from its record, as with the breaker closed (DESIGN
// section 5): a replay, or OUTCOME_UNKNOWN for one cut off while it ran. It was refused
// BREAKER_OPEN, and its `fallback_tool` then did the action a second time (the backup sent the
// email the primary had sent). A call with no record is still refused and falls back. Real HTTP
// tools that count what reaches them; the memory store and a private redis-server.

jest.setTimeout(30_000);

let tools: ToolServer;
let redis: TestRedis;
beforeAll(async () => {
  tools = await startToolServer({
    '/send': (req, res) => {
      const to = (req.body.arguments as { to?: string }).to;
      if (to === 'alice' || to === 'carol') res.writeHead(200).end(`sent to ${to}`);
      else res.writeHead(500).end('smtp down');
    },
    '/hang': () => undefined,
    '/backup': json({ backup: 'sent' }),
  });
  redis = await startRedis({ own: true });
});
afterAll(async () => {
  await tools?.close();
  await redis?.close();
});

const SCHEMA = `'{"type":"object","properties":{"to":{"type":"string"}}}'`;
const YAML = (url: string) => `
tools:
  - { name: send_email, effect: side_effect, fallback_tool: send_backup, retry: { max_attempts: 1 }, input_schema: ${SCHEMA}, http: { url: "${url}/send" } }
  - { name: send_slow, effect: side_effect, timeout_ms: 300, fallback_tool: send_backup, retry: { max_attempts: 1 }, input_schema: ${SCHEMA}, http: { url: "${url}/hang" } }
  - { name: send_backup, effect: side_effect, input_schema: ${SCHEMA}, http: { url: "${url}/backup" } }
policies:
  - { match: "send_*", breaker: { consecutive_failures: 1, half_open_after_ms: 60000 } }
`;

async function start(store: 'memory' | 'redis', hook: PreHook = () => ({ action: 'allow' })) {
  const factories = PLUGINS.map((factory) => (factory === guardsPlugin ? createGuardsPlugin({ preHooks: [hook] }) : factory));
  return startApp(YAML(tools.url), store === 'redis' ? { redisUrl: redis.url } : {}, factories);
}

type App = Awaited<ReturnType<typeof start>>;
const send = (d: App, sessionId: string, name: string, to: string) =>
  d.dispatch.dispatch({ sessionId, calls: [{ id: `c-${to}`, name, arguments: JSON.stringify({ to }) }] }).then((r) => r.results[0]!);
const sentTo = (path: string) => tools.received.filter((r) => r.path === path).map((r) => (r.body.arguments as { to: string }).to);

test.each(['memory', 'redis'] as const)('a call that ran is replayed while its breaker is open, and does not fall back; one with no record falls back (%s store)', async (store) => {
  const d = await start(store);
  const session = `replay-${store}`;
  const backups = sentTo('/backup').length;
  const sends = sentTo('/send').length;
  try {
    const first = await send(d, session, 'send_email', 'alice');
    expect(first).toMatchObject({ isError: false, output: 'sent to alice', idempotentReplay: false });
    expect((await send(d, `trip-replay-${store}`, 'send_email', 'bob')).isError).toBe(true); // a 500: the breaker opens
    const again = await send(d, session, 'send_email', 'alice');
    expect(again).toMatchObject({ isError: false, output: 'sent to alice', idempotentReplay: true, resolvedToolName: 'send_email' });
    expect(sentTo('/send').slice(sends)).toEqual(['alice', 'bob']);
    expect(sentTo('/backup').length - backups).toBe(0);
    // No record: refused, and its fallback sends it.
    const fresh = await send(d, session, 'send_email', 'carol');
    expect(fresh).toMatchObject({ isError: false, resolvedToolName: 'send_backup', output: '{"backup":"sent"}' });
    expect(fresh.warnings).toContain('fell back from "send_email" to "send_backup": "send_email" failed with BREAKER_OPEN');
    expect(sentTo('/send').slice(sends)).toEqual(['alice', 'bob']);
    expect(sentTo('/backup').slice(backups)).toEqual(['carol']);
  } finally {
    await d.close();
  }
});

test.each(['memory', 'redis'] as const)('a call cut off while it ran is told OUTCOME_UNKNOWN while its breaker is open, and its fallback does not send it (%s store)', async (store) => {
  const d = await start(store);
  const session = `unknown-${store}`;
  const backups = sentTo('/backup').length;
  try {
    const first = await send(d, session, 'send_slow', 'alice'); // times out mid-flight: the breaker opens
    expect(first.error?.kind).toBe(ErrorKind.TIMEOUT);
    const again = await send(d, session, 'send_slow', 'alice');
    expect(again).toMatchObject({ isError: true, resolvedToolName: 'send_slow' });
    expect(again.error?.kind).toBe(ErrorKind.OUTCOME_UNKNOWN);
    expect(again.warnings).toEqual([]);
    expect(sentTo('/backup').length - backups).toBe(0);
  } finally {
    await d.close();
  }
});

test.each(['memory', 'redis'] as const)('a call a policy now blocks, whose record exists, is replayed while its breaker is open, not sent by its fallback (%s store)', async (store) => {
  let frozen = false;
  const d = await start(store, (input) => (frozen && input.tool.name === 'send_email' ? { action: 'block', reason: 'mail frozen' } : { action: 'allow' }));
  const session = `blocked-${store}`;
  const backups = sentTo('/backup').length;
  try {
    expect((await send(d, session, 'send_email', 'alice')).isError).toBe(false);
    expect((await send(d, `trip-blocked-${store}`, 'send_email', 'bob')).isError).toBe(true); // the breaker opens
    frozen = true;
    const again = await send(d, session, 'send_email', 'alice');
    expect(again).toMatchObject({ isError: false, output: 'sent to alice', idempotentReplay: true, resolvedToolName: 'send_email' });
    expect(sentTo('/backup').length - backups).toBe(0);
  } finally {
    await d.close();
  }
});

test('a store that cannot answer while the breaker is open ends the call STORE_UNAVAILABLE, and its fallback does not send it again (redis store)', async () => {
  // Found in a review: the record was looked up apart; a lookup timed out was taken for "no
  // record", the next step (Redis back by then) refused BREAKER_OPEN, and the fallback re-sent.
  const d = await start('redis');
  const session = 'blip';
  const backups = sentTo('/backup').length;
  try {
    expect(await send(d, session, 'send_email', 'alice')).toMatchObject({ isError: false, output: 'sent to alice' });
    expect((await send(d, 'trip-blip', 'send_email', 'bob')).isError).toBe(true); // a 500: the breaker opens
    redis.signal('SIGSTOP');
    const resume = setTimeout(() => redis.signal('SIGCONT'), 1_500);
    let again;
    try {
      again = await send(d, session, 'send_email', 'alice');
    } finally {
      clearTimeout(resume);
      redis.signal('SIGCONT');
    }
    expect(again.resolvedToolName).not.toBe('send_backup');
    expect(again.error?.kind ?? ErrorKind.UNSPECIFIED).not.toBe(ErrorKind.BREAKER_OPEN);
    expect(sentTo('/backup').length - backups).toBe(0);
  } finally {
    await d.close();
  }
});
