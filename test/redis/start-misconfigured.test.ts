import { spawn, spawnSync } from 'node:child_process';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { createRegistryClient } from '../../src/client';
import type { Logger } from '../../src/log';
import { connectRedis, RedisConfigError, whenReady, type RedisClient } from '../../src/store/redis';
import { startAuthRedis, type AuthRedis } from '../helpers/auth-redis';
import { runDaemon, startDaemon } from '../helpers/daemon';
import { freeRedisPort, startRedis } from '../helpers/redis-server';
import { until } from '../helpers/until';

// An operator walk-through: a Redis URL with a database number the server does not have (`/99`)
// served on database 0, sharing another deployment's idempotency keys; a wrong or missing password
// served after ~7 s, health SERVING, every side-effecting call STORE_UNAVAILABLE, the log a stream
// of WRONGPASS naming no variable. Both are configuration Redis refuses, which waiting will not
// cure: dispatchd now stops at start, saying what to fix. Redis merely away still waits and serves
// degraded (test/redis/redis-down-at-start.test.ts). A real redis-server with requirepass.

jest.setTimeout(60_000);

const PASSWORD = 'right-pw';
let redis: AuthRedis;
const clients: RedisClient[] = [];
beforeAll(async () => {
  redis = await startAuthRedis(PASSWORD);
});
afterAll(async () => {
  for (const c of clients) c.disconnect();
  // ioredis ends a socket within 2 s of disconnect(), by a timer that outlives a socket already closed.
  await new Promise((r) => setTimeout(r, 2_100));
  await redis?.close();
});

const at = (auth: string, db = '') => `redis://${auth}127.0.0.1:${redis.port}${db}`;
const noPassword = { DISPATCH_REDIS_PASSWORD: '' };

test('a database number the server does not have stops dispatchd at start, naming the number; nothing is written to database 0', async () => {
  const run = await runDaemon(['--listen', '127.0.0.1:0', '--redis', at(`:${PASSWORD}@`, '/99')], noPassword);
  expect(run.stderr).toMatch(/dispatchd: cannot start: redis has no database 99, the number at the end of the Redis URL/);
  expect(run.stderr).not.toMatch(/dispatchd serving/);
  expect(run.code).toBe(1);
  expect(redis.cli('--scan', '--pattern', 'dispatch:*').trim()).toBe('');
});

test('a wrong password stops dispatchd at start, naming where it came from: DISPATCH_REDIS_PASSWORD, or the URL', async () => {
  const fromEnv = await runDaemon(['--listen', '127.0.0.1:0', '--redis', at('')], { DISPATCH_REDIS_PASSWORD: 'wrong-pw' });
  expect(fromEnv.stderr).toMatch(/dispatchd: cannot start: redis refused the password from DISPATCH_REDIS_PASSWORD: set it to the password redis requires \(WRONGPASS/);
  expect(fromEnv.code).toBe(1);
  const fromUrl = connectRedis(at(':wrong-pw@'), { env: { DISPATCH_REDIS_PASSWORD: 'not-used' } });
  clients.push(fromUrl);
  const refused = await whenReady(fromUrl, 5_000).catch((e: Error) => e);
  expect(refused).toBeInstanceOf(RedisConfigError);
  expect((refused as Error).message).toMatch(/^redis refused the password in the Redis URL \(redis:\/\/:PASSWORD@host:port\): set it to the password redis requires \(WRONGPASS/);
  expect((refused as Error).message).not.toContain('wrong-pw');
});

test('no password for a Redis that requires one stops dispatchd at start, naming DISPATCH_REDIS_PASSWORD', async () => {
  const started = Date.now();
  const run = await runDaemon(['--listen', '127.0.0.1:0', '--redis', at('')], noPassword);
  expect(run.stderr).toMatch(/dispatchd: cannot start: redis requires a password and none was given: set DISPATCH_REDIS_PASSWORD, or the password in the Redis URL/);
  expect(run.code).toBe(1);
  // At once: not after the 5 s start-up waits for a Redis that is away.
  expect(Date.now() - started).toBeLessThan(5_000);
});

test('the right password from DISPATCH_REDIS_PASSWORD, and a database the server has: dispatchd serves, its keys in that database', async () => {
  const daemon = await startDaemon(['--redis', at('', '/3')], { DISPATCH_REDIS_PASSWORD: PASSWORD });
  const registry = createRegistryClient(`127.0.0.1:${daemon.port}`);
  try {
    await registry.registerTools({ tools: [{ name: 'in-db-3', effect: Effect.READ_ONLY, executor: { case: 'builtin', value: { name: 'echo' } } }] });
    expect(redis.cli('-n', '3', '--scan', '--pattern', 'dispatch:tools:*')).toContain('dispatch:tools:');
    expect(redis.cli('-n', '0', '--scan', '--pattern', 'dispatch:*').trim()).toBe('');
  } finally {
    registry.close();
    daemon.child.kill('SIGKILL');
    await daemon.exited;
  }
});

test('Redis unreachable at start: whenReady still resolves false (dispatchd waits, then serves degraded)', async () => {
  const client = connectRedis(`redis://127.0.0.1:${await freeRedisPort()}`, { maxReconnectDelayMs: 100 });
  clients.push(client);
  await expect(whenReady(client, 1_000)).resolves.toBe(false);
  expect(client.status).not.toBe('end');
});

test('a password rotated after start: the connection fails closed, keeps trying, and logs the cause with the variable once per interval', async () => {
  const warnings: string[] = [];
  const logger: Logger = { debug() {}, info() {}, error() {}, warn: (message) => void warnings.push(message) };
  const client = connectRedis(at(''), { env: { DISPATCH_REDIS_PASSWORD: PASSWORD }, maxReconnectDelayMs: 50, logger });
  clients.push(client);
  expect(await whenReady(client, 5_000)).toBe(true);
  const asNew = (...args: string[]) => spawnSync('redis-cli', ['-p', String(redis.port), '--no-auth-warning', '-a', 'rotated-pw', ...args], { encoding: 'utf8', timeout: 5_000 }).stdout;
  try {
    redis.cli('CONFIG', 'SET', 'requirepass', 'rotated-pw');
    asNew('CLIENT', 'KILL', 'TYPE', 'normal');
    await until(() => warnings.some((w) => /DISPATCH_REDIS_PASSWORD/.test(w)) || undefined, 'the warning naming the variable', 5_000);
    // Reconnecting every 50 ms for a second: one line, not one per attempt.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(warnings.filter((w) => /DISPATCH_REDIS_PASSWORD/.test(w))).toEqual([
      expect.stringMatching(/^redis refused the password from DISPATCH_REDIS_PASSWORD: set it to the password redis requires/),
    ]);
    await expect(client.set('during-rotation', 'x')).rejects.toThrow();
    expect(client.status).not.toBe('end');
  } finally {
    asNew('CONFIG', 'SET', 'requirepass', PASSWORD);
  }
  await until(() => client.status === 'ready' || undefined, 'the connection back with the password Redis requires again', 5_000);
  expect(await client.set('after-rotation', 'ok')).toBe('OK');
});

test('a connection whose SELECT failed is never used on database 0: it is dropped and made again; whenReady rejects and ends it', async () => {
  const client = connectRedis(at(`:${PASSWORD}@`, '/99'), { env: {}, maxReconnectDelayMs: 50 });
  clients.push(client);
  let readies = 0;
  client.on('ready', () => readies++);
  // ioredis went on after the failed SELECT, on database 0, and was ready in a few ms.
  await new Promise((r) => setTimeout(r, 1_000));
  expect(readies).toBe(0);
  await expect(client.set('on-db-0', 'x')).rejects.toThrow();
  expect(redis.cli('EXISTS', 'on-db-0').trim()).toBe('0');
  await expect(whenReady(client, 5_000)).rejects.toThrow(new RedisConfigError('redis has no database 99, the number at the end of the Redis URL (redis://host:port/99): use one below the server\'s "databases" setting (16 by default) (ERR DB index is out of range)'));
  let connects = 0;
  client.on('connect', () => connects++);
  await new Promise((r) => setTimeout(r, 500));
  expect(connects).toBe(0);
});

test('a Cluster URL with a wrong password: whenReady rejects naming it (the error comes as the last node\'s, after the slots refresh failed)', async () => {
  const client = connectRedis(`redis-cluster://:wrong-pw@127.0.0.1:${redis.port}`, { env: {}, maxReconnectDelayMs: 100 });
  clients.push(client);
  await expect(whenReady(client, 5_000)).rejects.toThrow(/^redis refused the password in the Redis URL \(redis:\/\/:PASSWORD@host:port\): set it to the password redis requires \(WRONGPASS/);
});

test('an ACL user without a command the connection needs (SELECT, for a database number): whenReady rejects naming the user', async () => {
  redis.cli('ACL', 'SETUSER', 'no-select', 'on', '>user-pw', '~*', '&*', '+@all', '-select');
  const client = connectRedis(at('no-select:user-pw@', '/3'), { env: {}, maxReconnectDelayMs: 100 });
  clients.push(client);
  await expect(whenReady(client, 5_000)).rejects.toThrow(/^redis refused a command dispatch needs to user "no-select": grant it in the user's ACL \(NOPERM/);
});

test('a server busy running a script (BUSY answering SELECT) is not a configuration problem: whenReady waits, the connection is used on its database once the script is killed', async () => {
  // SELECT has no allow_busy flag: past busy-reply-threshold it is answered BUSY, as every command
  // but SCRIPT KILL (AUTH aside). That was reported as "redis has no database 1", and dispatchd exited 1.
  const busy = await startRedis({ own: true, extraArgs: ['--busy-reply-threshold', '100'] });
  const script = spawn('redis-cli', ['-p', String(busy.port), 'EVAL', 'while true do end', '0'], { stdio: 'ignore' });
  const warnings: { message: string; error: unknown }[] = [];
  const logger: Logger = { debug() {}, info() {}, error() {}, warn: (message, fields) => void warnings.push({ message, error: fields?.error }) };
  try {
    await until(() => (spawnSync('redis-cli', ['-p', String(busy.port), 'PING'], { encoding: 'utf8', timeout: 2_000 }).stdout.startsWith('BUSY') ? true : undefined), 'the server to answer BUSY', 5_000);
    const client = connectRedis(`redis://127.0.0.1:${busy.port}/1`, { env: {}, maxReconnectDelayMs: 100, logger });
    clients.push(client);
    await expect(whenReady(client, 1_500)).resolves.toBe(false);
    expect(warnings.map((w) => w.message)).not.toContainEqual(expect.stringMatching(/no database/));
    expect(warnings).toContainEqual({ message: expect.stringMatching(/^redis refused to select the database for now; reconnecting/), error: expect.stringMatching(/^BUSY /) });
    busy.cli('SCRIPT', 'KILL');
    await expect(whenReady(client, 5_000)).resolves.toBe(true);
    expect(await client.set('after-busy', 'x')).toBe('OK');
    expect(busy.cli('-n', '1', 'EXISTS', 'after-busy').trim()).toBe('1');
    expect(busy.cli('-n', '0', 'EXISTS', 'after-busy').trim()).toBe('0');
  } finally {
    if (script.exitCode === null) spawnSync('redis-cli', ['-p', String(busy.port), 'SCRIPT', 'KILL'], { timeout: 2_000 });
    script.kill('SIGKILL');
    await busy.close();
  }
});

test('a server without SELECT (renamed away, or a proxy) stops start-up saying it has only database 0, not that database 2 is missing', async () => {
  const noSelect = await startRedis({ own: true, extraArgs: ['--rename-command', 'SELECT', ''] });
  try {
    const client = connectRedis(`redis://127.0.0.1:${noSelect.port}/2`, { env: {}, maxReconnectDelayMs: 100 });
    clients.push(client);
    await expect(whenReady(client, 5_000)).rejects.toThrow(/^redis does not take SELECT \(a proxy, or the command renamed\), so it has only database 0: remove the number at the end of the Redis URL \(redis:\/\/host:port\/2\) \(ERR unknown command/);
  } finally {
    await noSelect.close();
  }
});
