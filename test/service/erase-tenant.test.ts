import { status } from '@grpc/grpc-js';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startToolServer, type ToolServer } from '../helpers/servers';
import { dispatchctlAt } from '../helpers/dispatchctl';
import { authYaml, bearer, startAuthApp, statusOf, type AuthApp, type TestToken } from '../security/support/auth-app';

// EraseTenant ends every session of the caller's tenant as EndSession ends one (records, memory,
// windows, results; each replica's memoized reads), and with remove_tools removes the tools it
// registered; scope admin, and confirm_tenant must name the tenant. Other tenants keep theirs.

jest.setTimeout(30_000);

const ACME_ADMIN: TestToken = { token: 'acme-admin-token-1', tenant: 'acme', scopes: ['dispatch', 'admin'] };
const ACME_CALLER: TestToken = { token: 'acme-caller-token-2', tenant: 'acme', scopes: ['dispatch'] };
const BETA: TestToken = { token: 'beta-admin-token-3', tenant: 'beta', scopes: ['dispatch', 'admin'] };

let tools: ToolServer;
let redis: TestRedis;
const apps: AuthApp[] = [];
let sent = 0;
let looked = 0;

const config = () => `${authYaml([ACME_ADMIN, ACME_CALLER, BETA])}tools:
  - name: send
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/send" }
  - name: lookup
    effect: read_only
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/lookup" }
`;

async function start(redisUrl?: string): Promise<AuthApp> {
  const app = await startAuthApp(config(), redisUrl === undefined ? {} : { daemon: { redisUrl } });
  apps.push(app);
  return app;
}

const as = (who: TestToken) => bearer(who.token);

async function call(app: AuthApp, who: TestToken, sessionId: string, name: string, args = '{"to":"a@example.com"}') {
  const { results } = await app.dispatch.dispatch({ sessionId, calls: [{ id: `c-${sessionId}`, name, arguments: args }] }, as(who));
  expect(results[0]!.isError).toBe(false);
  return results[0]!;
}

const memoryOf = async (app: AuthApp, who: TestToken, sessionId: string) => (await app.dispatch.getSessionMemory({ sessionId }, as(who))).entries;

beforeAll(async () => {
  tools = await startToolServer({
    '/send': (_req, res) => void res.writeHead(200).end(`sent #${++sent}`),
    '/lookup': (_req, res) => void res.writeHead(200).end(`answer #${++looked}`),
  });
  // Kept across a restart (the test of Redis away restarts it), as the Helm chart's Redis keeps it.
  redis = await startRedis({ own: true, persistence: 'aof-always' });
});
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});
afterAll(async () => {
  await tools?.close();
  await redis?.close();
});

describe.each([
  ['the memory store', false],
  ['Redis, two replicas', true],
])('EraseTenant, with %s', (_store, withRedis) => {
  test("ends every session of the tenant on every replica, and no other tenant's", async () => {
    const one = await start(withRedis ? redis.url : undefined);
    const two = withRedis ? await start(redis.url) : one;
    const first = await call(one, ACME_ADMIN, 'mail', 'send');
    await call(one, ACME_CALLER, 'other-session', 'send', '{"to":"b@example.com"}');
    const read = await call(two, ACME_ADMIN, 'reads', 'lookup', '{"q":1}');
    expect((await call(two, ACME_ADMIN, 'reads', 'lookup', '{"q":1}')).cached).toBe(true);
    const kept = await call(one, BETA, 'mail', 'send');
    expect(await memoryOf(one, ACME_ADMIN, 'mail')).toHaveLength(1);

    // Refused, nothing erased: another tenant named, none named, a token without scope admin.
    const wrong = await statusOf(one.dispatch.eraseTenant({ confirmTenant: 'beta' }, as(ACME_ADMIN)));
    expect(wrong).toEqual({ code: status.INVALID_ARGUMENT, details: `confirm_tenant must name the caller's tenant, "acme", to erase it; got "beta"` });
    expect((await statusOf(one.dispatch.eraseTenant({}, as(ACME_ADMIN)))).code).toBe(status.INVALID_ARGUMENT);
    expect((await statusOf(one.dispatch.eraseTenant({ confirmTenant: 'acme' }, as(ACME_CALLER)))).code).toBe(status.PERMISSION_DENIED);
    expect(await memoryOf(one, ACME_ADMIN, 'mail')).toHaveLength(1);

    const erased = await one.dispatch.eraseTenant({ confirmTenant: 'acme' }, as(ACME_ADMIN));
    expect(erased).toMatchObject({ sessionsEnded: 3n, toolsRemoved: 0 });
    // Its records are gone: the same call runs again (not replayed); its memory too; the replica
    // that served the read drops its memoized copy (heard through Redis, or here at once).
    for (const app of [one, two]) expect(await memoryOf(app, ACME_ADMIN, 'mail')).toEqual([]);
    const again = await call(two, ACME_ADMIN, 'mail', 'send');
    expect(again.idempotentReplay).toBe(false);
    expect(again.output).not.toBe(first.output);
    let reread = await call(two, ACME_ADMIN, 'reads', 'lookup', '{"q":1}');
    for (const deadline = Date.now() + 10_000; reread.cached && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      reread = await call(two, ACME_ADMIN, 'reads', 'lookup', '{"q":1}');
    }
    expect(reread.cached).toBe(false);
    expect(reread.output).not.toBe(read.output);
    // The other tenant's session of the same id keeps its record and memory.
    const replayed = await call(two, BETA, 'mail', 'send');
    expect(replayed).toMatchObject({ idempotentReplay: true, output: kept.output });
    expect(await memoryOf(one, BETA, 'mail')).toHaveLength(1);
  });

  test('with remove_tools removes the tenant\'s registered tools on every replica, not the config file\'s; asked again, finds nothing more', async () => {
    const one = await start(withRedis ? redis.url : undefined);
    const two = withRedis ? await start(redis.url) : one;
    const spec = (name: string) => ({ name, effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', executor: { case: 'builtin' as const, value: { name: 'echo' } } });
    await one.registry.registerTools({ tools: [spec('mine'), spec('also_mine')] }, as(ACME_ADMIN));
    await one.registry.registerTools({ tools: [spec('theirs')] }, as(BETA));
    const names = async (app: AuthApp, who: TestToken) => (await app.registry.listTools({}, as(who))).tools.map((t) => t.name).sort();
    for (const deadline = Date.now() + 10_000; !(await names(two, ACME_ADMIN)).includes('mine') && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 20));
    await call(two, ACME_ADMIN, 'own', 'mine', '{}');
    // A tool of the tenant's that an operator's tool of the same name, added later (as an MCP
    // server's listed later is), hides on replica one: not listed there, but the tenant's still.
    await one.registry.registerTools({ tools: [spec('hidden')] }, as(ACME_ADMIN));
    for (const deadline = Date.now() + 10_000; !two.app.deps.registry.lookup('acme', 'hidden') && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 20));
    one.app.deps.registry.register([{ ...one.app.deps.registry.lookup('', 'lookup')!.spec, name: 'hidden' }], { tenant: '' });
    expect(one.app.deps.registry.list('acme').find((t) => t.name === 'hidden')?.tenant).toBe('');
    const held = (app: AuthApp) => app.app.deps.registry.list('acme', true).map((t) => t.name).sort();
    expect(held(two)).toEqual(['also_mine', 'hidden', 'mine']);

    const erased = await one.dispatch.eraseTenant({ confirmTenant: 'acme', removeTools: true }, as(ACME_ADMIN));
    expect(erased.toolsRemoved).toBe(3);
    expect(erased.sessionsEnded).toBeGreaterThanOrEqual(1n);
    for (const app of [one, two]) {
      for (const deadline = Date.now() + 10_000; (await names(app, ACME_ADMIN)).includes('mine') && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 20));
      // Replica one keeps its operator's 'hidden'.
      const operators = app === one ? ['hidden', 'lookup', 'send'] : ['lookup', 'send'];
      expect(await names(app, ACME_ADMIN)).toEqual(operators);
      expect(await names(app, BETA)).toEqual([...operators, 'theirs']);
      for (const deadline = Date.now() + 10_000; held(app).length > 0 && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(held(app)).toEqual([]);
    }
    expect(await one.dispatch.eraseTenant({ confirmTenant: 'acme', removeTools: true }, as(ACME_ADMIN))).toMatchObject({ sessionsEnded: 0n, toolsRemoved: 0 });
  });
});

test('dispatchctl erase-tenant says what it ended; a tenant not spelled out is refused', async () => {
  const app = await start();
  await call(app, ACME_ADMIN, 'one', 'send');
  await call(app, ACME_ADMIN, 'two', 'lookup', '{"q":2}');
  const ctl = dispatchctlAt(() => app.address);
  const refused = await ctl('--token', ACME_ADMIN.token, 'erase-tenant', 'acm');
  expect(refused.code).toBe(1);
  expect(refused.err).toContain(`confirm_tenant must name the caller's tenant, "acme", to erase it; got "acm"`);
  expect(await ctl('--token', ACME_ADMIN.token, 'erase-tenant', 'acme', '--remove-tools')).toEqual({ code: 0, out: 'tenant acme: 2 sessions ended, 0 tools removed', err: '' });
  expect(await ctl('--token', ACME_ADMIN.token, 'erase-tenant', 'acme')).toEqual({ code: 0, out: 'tenant acme: 0 sessions ended', err: '' });
  expect((await ctl('erase-tenant')).err).toContain('erase-tenant needs TENANT');
});

test('Redis away: UNAVAILABLE saying how far it got and to ask EraseTenant again, nothing lost; asked again once Redis is back, it ends them', async () => {
  const app = await start(redis.url);
  await call(app, ACME_ADMIN, 'kept', 'send');
  await app.registry.registerTools({ tools: [{ name: 'temp', effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', executor: { case: 'builtin', value: { name: 'echo' } } }] }, as(ACME_ADMIN));
  await redis.stop();
  try {
    const refused = await statusOf(app.dispatch.eraseTenant({ confirmTenant: 'acme' }, as(ACME_ADMIN)));
    expect(refused.code).toBe(status.UNAVAILABLE);
    expect(refused.details).toMatch(/^the session store failed after 0 sessions of the tenant were ended \(redis failed a scan of the tenant's sessions: .*\); ask again to end the rest$/);
    // A tool's removal, which must reach Redis first, fails too: the message names EraseTenant.
    const notRemoved = await statusOf(app.dispatch.eraseTenant({ confirmTenant: 'acme', removeTools: true }, as(ACME_ADMIN)));
    expect(notRemoved.code).toBe(status.UNAVAILABLE);
    expect(notRemoved.details).toMatch(/^tool "temp" was not removed.*; ask EraseTenant again \(0 of the tenant's tools were removed before it; no session was ended yet\)$/);
  } finally {
    await redis.start();
  }
  // Asked again until the store's connection is back (ioredis reconnects with its backoff).
  let erased: Awaited<ReturnType<typeof app.dispatch.eraseTenant>> | undefined;
  for (const deadline = Date.now() + 20_000; !erased && Date.now() < deadline; ) {
    erased = await app.dispatch.eraseTenant({ confirmTenant: 'acme', removeTools: true }, as(ACME_ADMIN)).catch(() => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 50)));
  }
  expect(erased?.sessionsEnded).toBeGreaterThanOrEqual(1n);
  expect(erased?.toolsRemoved).toBe(1);
  expect((await call(app, ACME_ADMIN, 'kept', 'send')).idempotentReplay).toBe(false);
});
