import { spawnSync } from 'node:child_process';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { createRegistryClient } from '../../src/client';
import { connectRedis, createRedisStore, parseRedisUrl, RedisConfigError, whenReady, type RedisClient } from '../../src/store/redis';
import { startAuthRedis, type AuthRedis } from '../helpers/auth-redis';
import { runDaemon, startDaemon } from '../helpers/daemon';

// Sentinels with requirepass (Bitnami's redis chart: auth.sentinel true, its default) answer
// nothing but AUTH until the client authenticates, with the Sentinels' password, not the master's.
// A real redis-server and Sentinel, both requiring a password, on loopback.

jest.setTimeout(60_000);

const NAME = 'auth-master';
const MASTER_PASSWORD = 'master-pw';
const SENTINEL_PASSWORD = 's3ntinel+pw';
let master: AuthRedis;
let sentinel: AuthRedis;
const clients: RedisClient[] = [];
beforeAll(async () => {
  master = await startAuthRedis(MASTER_PASSWORD);
  sentinel = await startAuthRedis(SENTINEL_PASSWORD, { kind: 'sentinel', name: NAME, masterPort: master.port, masterPassword: MASTER_PASSWORD });
});
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await sentinel?.close();
  await master?.close();
});

const url = (query = '') => `redis-sentinel://127.0.0.1:${sentinel.port}/${NAME}${query}`;
const connect = (target: string, env: NodeJS.ProcessEnv) => {
  // A short retry delay: ioredis's sentinel retry timer outlives disconnect() by one delay.
  const client = connectRedis(target, { env, maxReconnectDelayMs: 100 });
  clients.push(client);
  return client;
};

test('the test Sentinel requires its password, and knows the master', () => {
  expect(sentinel.cli('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', NAME)).toBe(`127.0.0.1\n${master.port}\n`);
  const r = spawnSync('redis-cli', ['-p', String(sentinel.port), 'SENTINEL', 'MASTERS'], { encoding: 'utf8' });
  expect(r.stdout).toMatch(/NOAUTH/);
});

test('DISPATCH_REDIS_SENTINEL_PASSWORD authenticates to the Sentinels, DISPATCH_REDIS_PASSWORD to the master', async () => {
  const client = connect(url(), { DISPATCH_REDIS_PASSWORD: MASTER_PASSWORD, DISPATCH_REDIS_SENTINEL_PASSWORD: SENTINEL_PASSWORD });
  expect(await whenReady(client, 10_000)).toBe(true);
  const store = createRedisStore(client);
  const scope = { tenant: 't', sessionId: 's' };
  expect((await store.beginAttempt({ scope, op: 'o', claim: { key: 'via-auth-sentinel', leaseMs: 5000 } })).claim).toEqual({ state: 'claimed' });
  expect(master.cli('--scan', '--pattern', 'dispatch:*:idem:via-auth-sentinel').trim()).not.toBe('');
});

test('the URL form: ?sentinel_password= (percent-encoded), and an ACL username with ?sentinel_username=', async () => {
  const query = `?sentinel_username=default&sentinel_password=${encodeURIComponent(SENTINEL_PASSWORD)}`;
  const client = connect(`redis-sentinel://:${MASTER_PASSWORD}@127.0.0.1:${sentinel.port}/${NAME}${query}`, {});
  expect(await whenReady(client, 10_000)).toBe(true);
  expect(await client.set('url-form', 'ok')).toBe('OK');
  expect(master.cli('GET', 'url-form')).toBe('ok\n');
});

test('without the Sentinels\' password, or with only the master\'s, the master is never found: whenReady rejects naming DISPATCH_REDIS_SENTINEL_PASSWORD', async () => {
  const without = connect(url(), { DISPATCH_REDIS_PASSWORD: MASTER_PASSWORD });
  const wrong = connect(url(), { DISPATCH_REDIS_PASSWORD: MASTER_PASSWORD, DISPATCH_REDIS_SENTINEL_PASSWORD: MASTER_PASSWORD });
  const [a, b] = await Promise.allSettled([whenReady(without, 5_000), whenReady(wrong, 5_000)]);
  expect(a).toMatchObject({ status: 'rejected', reason: expect.any(RedisConfigError) });
  expect(b).toMatchObject({ status: 'rejected', reason: expect.any(RedisConfigError) });
  expect(a.status === 'rejected' && (a.reason as Error).message).toMatch(/^the Sentinels require a password and none was given: set DISPATCH_REDIS_SENTINEL_PASSWORD, or the Redis URL's sentinel_password parameter \(NOAUTH/);
  expect(b.status === 'rejected' && (b.reason as Error).message).toMatch(/^the Sentinels refused the password from DISPATCH_REDIS_SENTINEL_PASSWORD: set it to the password the Sentinels require \(WRONGPASS/);
  await new Promise((r) => setTimeout(r, 300));
});

test('the Sentinels\' password right, the master\'s wrong: whenReady rejects naming DISPATCH_REDIS_PASSWORD, and dispatchd stops at start', async () => {
  const client = connect(url(), { DISPATCH_REDIS_PASSWORD: 'not-the-master-pw', DISPATCH_REDIS_SENTINEL_PASSWORD: SENTINEL_PASSWORD });
  await expect(whenReady(client, 5_000)).rejects.toThrow(/^the master the Sentinels name \(auth-master\) refused the password from DISPATCH_REDIS_PASSWORD: set it to the password the master the Sentinels name \(auth-master\) requires \(WRONGPASS/);
  const run = await runDaemon(['--listen', '127.0.0.1:0', '--redis', url(`?sentinel_password=${encodeURIComponent(MASTER_PASSWORD)}`)], { DISPATCH_REDIS_PASSWORD: MASTER_PASSWORD });
  expect(run.stderr).toMatch(/dispatchd: cannot start: the Sentinels refused the Redis URL's sentinel_password parameter: set it to the password the Sentinels require/);
  expect(run.code).toBe(1);
  await new Promise((r) => setTimeout(r, 300));
});

test('dispatchd given DISPATCH_REDIS_SENTINEL_PASSWORD serves its store through the Sentinel', async () => {
  const daemon = await startDaemon(['--redis', url()], { DISPATCH_REDIS_PASSWORD: MASTER_PASSWORD, DISPATCH_REDIS_SENTINEL_PASSWORD: SENTINEL_PASSWORD });
  const registry = createRegistryClient(`127.0.0.1:${daemon.port}`);
  try {
    await registry.registerTools({ tools: [{ name: 'shared', effect: Effect.READ_ONLY, executor: { case: 'builtin', value: { name: 'echo' } } }] });
    expect(master.cli('--scan', '--pattern', 'dispatch:tools:*')).toContain('dispatch:tools:');
  } finally {
    registry.close();
    daemon.child.kill('SIGKILL');
    await daemon.exited;
  }
});

test('sentinel credentials in the URL: query parameters, hidden in errors, and the environment as fallback', () => {
  const env = { DISPATCH_REDIS_SENTINEL_USERNAME: 'env-user', DISPATCH_REDIS_SENTINEL_PASSWORD: 'env-pw' };
  expect(parseRedisUrl('redis-sentinel://s1/m?sentinel_password=a%2Bb+c', {})).toEqual({
    mode: 'sentinel',
    sentinels: [{ host: 's1', port: 26379 }],
    tls: false,
    name: 'm',
    sentinelPassword: 'a+b+c',
  });
  expect(parseRedisUrl('redis-sentinel://s1/m', env)).toMatchObject({ sentinelUsername: 'env-user', sentinelPassword: 'env-pw' });
  expect(parseRedisUrl('redis-sentinel://s1/m?sentinel_password=url-pw', env)).toMatchObject({ sentinelUsername: 'env-user', sentinelPassword: 'url-pw' });
  expect(parseRedisUrl('redis://h:1', env)).not.toHaveProperty('sentinelPassword');
  expect(() => parseRedisUrl('redis-sentinel://s1/m?sentinel_password=hunter2&tls=1', {})).toThrow(
    'bad Redis URL "redis-sentinel://s1/m?sentinel_password=***&tls=1": unknown parameter "tls" (a sentinel URL takes sentinel_username and sentinel_password)',
  );
  expect(() => parseRedisUrl('redis://h:1/0?sentinel_password=hunter2', {})).toThrow(
    'bad Redis URL "redis://h:1/0?sentinel_password=***": only a redis-sentinel:// URL takes parameters (sentinel_username, sentinel_password)',
  );
  expect(() => parseRedisUrl('redis-sentinel://s1/m?sentinel_password=%zz', {})).toThrow('parameter "sentinel_password" is not percent-encoded');
});
