import { randomUUID } from 'node:crypto';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { createLogger, type Logger } from '../../src/log';
import { connectRedis, createRedisStore, RedisConfigError, whenReady, type RedisClient } from '../../src/store/redis';
import { REQUIRED_ACL } from '../../src/store/redis/misconfiguration';
import { runDaemon } from '../helpers/daemon';
import { failedStart } from '../helpers/startup-line';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer } from '../helpers/servers';
import { until } from '../helpers/until';

// An operator walk-through: an ACL user that may not run scripts (-eval -evalsha), or whose keys
// are not dispatch's (~app:*), or whose channels are not (&app:*): dispatchd started and served,
// every side-effecting call failing STORE_UNAVAILABLE "unreachable, or out of room", the log one
// NOPERM line per call. Now start-up stops naming the user and the ACL dispatch needs, a refusal
// after start is logged as the ACL problem it is once a minute, and dispatchd works under exactly
// the documented ACL (docs/redis.md, "ACL"). A real redis-server with ACL users.

jest.setTimeout(60_000);

let redis: TestRedis;
const clients: RedisClient[] = [];
beforeAll(async () => {
  redis = await startRedis({ own: true });
  const user = (name: string, ...rules: string[]) => redis.cli('ACL', 'SETUSER', name, 'reset', 'on', '>pw', ...rules);
  user('noeval', '~*', '&*', '+@all', '-eval', '-evalsha');
  user('nokeys', '~app:*', '&*', '+@all');
  user('nochannels', '~*', '&app:*', '+@all');
  user('dispatch', ...REQUIRED_ACL.split(' '));
});
afterAll(async () => {
  for (const c of clients) c.disconnect();
  // ioredis ends a socket within 2 s of disconnect(), by a timer that outlives a socket already closed.
  await new Promise((r) => setTimeout(r, 2_100));
  await redis?.close();
});

const urlOf = (user: string) => `redis://${user}:pw@127.0.0.1:${redis.port}/0`;
const connect = (user: string, logger?: Logger) => {
  const client = connectRedis(urlOf(user), { env: {}, maxReconnectDelayMs: 100, logger });
  clients.push(client);
  return client;
};

test.each([
  ['noeval', /NOPERM this user has no permissions to run the 'eval' command/],
  ['nokeys', /NOPERM this user has no permissions to access one of the keys/],
  ['nochannels', /NOPERM denied on dispatch:\* keys and channels: PUBLISH dispatch:tool-changes, SUBSCRIBE dispatch:tool-changes\)/],
])('user %s: whenReady rejects naming the user, what was refused and the ACL dispatch needs', async (user, refusal) => {
  const refused = await whenReady(connect(user), 5_000).catch((e: Error) => e);
  expect(refused).toBeInstanceOf(RedisConfigError);
  expect((refused as Error).message).toMatch(new RegExp(`^redis refused a command dispatch needs to user "${user}": grant it in the user's ACL \\(`));
  expect((refused as Error).message).toMatch(refusal);
  expect((refused as Error).message).toContain(`dispatch needs ${REQUIRED_ACL}`);
});

test('dispatchd under a user that may not run scripts stops at start, saying so', async () => {
  const run = await runDaemon(['--listen', '127.0.0.1:0', '--redis', urlOf('noeval')], {});
  expect(failedStart(run)).toEqual({
    exit: 1,
    level: 'error',
    code: 'redis_refused',
    message: expect.stringMatching(/dispatchd: cannot start: redis refused a command dispatch needs to user "noeval": grant it in the user's ACL \(NOPERM/),
  });
  expect(run.stderr).not.toMatch(/dispatchd serving/);
});

test('under exactly the documented ACL, dispatch serves: a side-effecting call runs once and is replayed, registered tools are shared; no NOPERM', async () => {
  const lines: string[] = [];
  const tools = await startToolServer({ '/pay': (_req, res) => void res.writeHead(200).end(`paid ${tools.count('/pay')}`) });
  const pay = `{ name: pay, effect: side_effect, input_schema: '{"type":"object"}', http: { url: "${tools.url}/pay" } }`;
  const app = await startApp(`tools:\n  - ${pay}\n`, { redisUrl: urlOf('dispatch'), logger: createLogger('info', (line) => lines.push(line) > 0) });
  try {
    const session = `s-${randomUUID()}`;
    const call = async () => (await app.dispatch.dispatch({ sessionId: session, calls: [{ id: `c_${randomUUID()}`, name: 'pay', arguments: '{"ref":"r1"}' }] })).results[0]!;
    expect(await call()).toMatchObject({ isError: false, output: 'paid 1', idempotentReplay: false });
    expect(await call()).toMatchObject({ isError: false, output: 'paid 1', idempotentReplay: true });
    await app.registry.registerTools({ tools: [{ name: 'shared', effect: Effect.READ_ONLY, executor: { case: 'builtin', value: { name: 'echo' } } }] });
    expect(redis.cli('--scan', '--pattern', 'dispatch:tools:*')).toContain('dispatch:tools:');
    await app.dispatch.endSession({ sessionId: session });
  } finally {
    await app.close();
    await tools.close();
  }
  expect(lines.filter((l) => /NOPERM|could not read redis settings/.test(l))).toEqual([]);
});

test('scripts denied after start: calls fail closed, and the log names the ACL problem once, not once per call', async () => {
  redis.cli('ACL', 'SETUSER', 'revoked', 'reset', 'on', '>pw', ...REQUIRED_ACL.split(' '));
  const warnings: string[] = [];
  const logger: Logger = { debug() {}, info() {}, error() {}, warn: (message) => void warnings.push(message) };
  const client = connect('revoked', logger);
  expect(await whenReady(client, 5_000)).toBe(true);
  const store = createRedisStore(client, { logger });
  redis.cli('ACL', 'SETUSER', 'revoked', '-eval', '-evalsha');
  const scope = { tenant: 't', sessionId: `s-${randomUUID()}` };
  for (let i = 0; i < 5; i++) await expect(store.beginAttempt({ scope, op: 'o', claim: { key: `k${i}`, leaseMs: 5_000 } })).rejects.toThrow(/NOPERM/);
  const acl = warnings.filter((w) => w.startsWith('redis refused a command dispatch needs to user "revoked"'));
  expect(acl).toEqual([`redis refused a command dispatch needs to user "revoked": grant it in the user's ACL; dispatch needs ${REQUIRED_ACL}`]);
  // Reconnected (Redis restarted with the narrower ACL): asked again at ready, still one line a minute.
  redis.cli('CLIENT', 'KILL', 'USER', 'revoked');
  await until(() => client.status === 'ready' || undefined, 'the connection back', 5_000);
  await new Promise((r) => setTimeout(r, 300));
  expect(warnings.filter((w) => w.startsWith('redis refused a command dispatch needs to user "revoked"'))).toHaveLength(1);
  await store.close();
});

test("a store under its own prefix (RedisStoreOptions.prefix): whenReady probes that prefix's keys and channels, which its user is granted", async () => {
  redis.cli('ACL', 'SETUSER', 'acme', 'reset', 'on', '>pw', ...REQUIRED_ACL.replace('~dispatch:* &dispatch:*', '~acme:* &acme:*').split(' '));
  const client = connectRedis(urlOf('acme'), { env: {}, maxReconnectDelayMs: 100, prefix: 'acme' });
  clients.push(client);
  expect(await whenReady(client, 5_000)).toBe(true);
  const store = createRedisStore(client, { prefix: 'acme' });
  const scope = { tenant: 't', sessionId: `s-${randomUUID()}` };
  expect((await store.beginAttempt({ scope, op: 'o', claim: { key: 'k', leaseMs: 5_000 }, budget: { id: 'b', max: 2, token: 'c1' } })).claim).toEqual({ state: 'claimed' });
  await store.close();
  // The same user under the default prefix is refused, naming the prefix it probed.
  const refused = await whenReady(connect('acme'), 5_000).catch((e: Error) => e);
  expect((refused as Error).message).toMatch(/NOPERM/);
});

test("a store under its own prefix whose user is refused: the message names the ACL of that prefix, not dispatch's", async () => {
  // It named `~dispatch:* &dispatch:*` whatever the prefix: granting that would not have helped.
  const client = connectRedis(urlOf('nokeys'), { env: {}, maxReconnectDelayMs: 100, prefix: 'acme' });
  clients.push(client);
  const refused = await whenReady(client, 5_000).catch((e: Error) => e);
  expect(refused).toBeInstanceOf(RedisConfigError);
  expect((refused as Error).message).toMatch(/^redis refused a command dispatch needs to user "nokeys": grant it in the user's ACL \(NOPERM /);
  expect((refused as Error).message).toMatch(/; dispatch needs ~acme:\* &acme:\* -@all \+@read /);
  expect((refused as Error).message.endsWith(`; dispatch needs ${REQUIRED_ACL.replace('~dispatch:* &dispatch:*', '~acme:* &acme:*')}`)).toBe(true);
  expect((refused as Error).message).not.toContain('~dispatch:*');
});
