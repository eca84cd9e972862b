import { spawnSync } from 'node:child_process';
import type { Logger } from '../../src/log';
import { connectRedis, RedisConfigError, whenReady, type RedisClient } from '../../src/store/redis';
import { runDaemon } from '../helpers/daemon';
import { failedStart } from '../helpers/startup-line';
import { freeRedisPort, startRedis, startSentinel, type TestRedis, type TestSentinel } from '../helpers/redis-server';
import { startApp } from '../helpers/servers';
import { until } from '../helpers/until';

// Through Sentinel: a master name the Sentinels do not monitor served with the store down, the log
// ~7 lines a second ("All sentinels are unreachable. Retrying from scratch after Nms", the delay
// changing each time); the settings warnings named ioredis's default "localhost:6379", not the
// master, and a master promoted by a failover went unchecked under that same label. Real
// redis-servers: a master, its replica and a Sentinel (quorum 1).

jest.setTimeout(60_000);

const NAME = 'acl-master';
let master: TestRedis;
let replica: TestRedis;
let sentinel: TestSentinel;
const clients: RedisClient[] = [];
beforeAll(async () => {
  master = await startRedis({ own: true });
  replica = await startRedis({ own: true });
  replica.cli('REPLICAOF', '127.0.0.1', String(master.port));
  sentinel = await startSentinel(master.port, NAME, { failoverTimeoutMs: 5_000 });
});
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await new Promise((r) => setTimeout(r, 300));
  await sentinel?.close();
  await replica?.close();
  await master?.close();
});

/** redis-cli against the Sentinel (TestSentinel has no cli). */
const sentinelCli = (...args: string[]) => spawnSync('redis-cli', ['-p', String(sentinel.port), ...args], { encoding: 'utf8', timeout: 5_000 }).stdout;

function recording() {
  const warnings: { message: string; fields?: Record<string, unknown> }[] = [];
  const logger: Logger = { debug() {}, info() {}, error() {}, warn: (message, fields) => void warnings.push({ message, fields }) };
  return { warnings, logger };
}

test('a master name the Sentinels do not monitor: whenReady rejects naming it, logged once; dispatchd stops at start', async () => {
  const { warnings, logger } = recording();
  const client = connectRedis(`redis-sentinel://127.0.0.1:${sentinel.port}/nosuch`, { env: {}, maxReconnectDelayMs: 50, logger });
  clients.push(client);
  const refused = await whenReady(client, 5_000).catch((e: Error) => e);
  expect(refused).toBeInstanceOf(RedisConfigError);
  expect((refused as Error).message).toMatch(/^the Sentinels monitor no master named "nosuch", the name at the end of the Redis URL \(redis-sentinel:\/\/host:port\/nosuch\): use the name of their "sentinel monitor" line \(ERR No such master with that name\)$/);
  expect(warnings.map((w) => w.message)).toEqual([(refused as Error).message]);
  const run = await runDaemon(['--listen', '127.0.0.1:0', '--redis', `redis-sentinel://127.0.0.1:${sentinel.port}/nosuch`], {});
  expect(failedStart(run)).toEqual({ exit: 1, level: 'error', code: 'redis_refused', message: expect.stringMatching(/dispatchd: cannot start: the Sentinels monitor no master named "nosuch"/) });
});

test('no Sentinel answering: one log line for the outage, not one per retry (the retry delay is not part of the error)', async () => {
  const { warnings, logger } = recording();
  const client = connectRedis(`redis-sentinel://127.0.0.1:${await freeRedisPort()}/${NAME}`, { env: {}, maxReconnectDelayMs: 50, logger });
  clients.push(client);
  await expect(whenReady(client, 1_500)).resolves.toBe(false);
  expect(warnings.map((w) => w.message)).toEqual(['redis error']);
  expect(String(warnings[0]!.fields?.error)).toMatch(/^All sentinels are unreachable\. Retrying from scratch after \d+ms\. Last error: .+/);
  client.disconnect();
});

// Last: it fails the master over to the replica.
test('the settings warnings name the master the Sentinels lead to, and the new master after a failover', async () => {
  const { warnings, logger } = recording();
  const appendOnly = (port: number) => warnings.filter((w) => /keeps no append-only file/.test(w.message) && w.fields?.node === `127.0.0.1:${port}`);
  const app = await startApp('tools: []\n', { redisUrl: `redis-sentinel://127.0.0.1:${sentinel.port}/${NAME}`, logger });
  try {
    await until(() => appendOnly(master.port).length === 1 || undefined, `the warning naming the master 127.0.0.1:${master.port}`, 5_000);
    expect(warnings.filter((w) => w.fields?.node === 'localhost:6379')).toEqual([]);
    await until(() => /master_link_status:up/.test(replica.cli('INFO', 'replication')) || undefined, 'the replica in sync', 5_000);
    await until(() => /slaves\n1\n/.test(sentinelCli('SENTINEL', 'MASTER', NAME)) || undefined, 'the Sentinel to know the replica', 15_000);
    expect(sentinelCli('SENTINEL', 'FAILOVER', NAME)).toMatch(/OK/);
    await until(() => appendOnly(replica.port).length === 1 || undefined, `the warning naming the new master 127.0.0.1:${replica.port}`, 15_000);
  } finally {
    await app.close();
  }
});
