// An SRE's finding: when Redis went down, a dozen identical "redis connection lost" / "redis error"
// lines came from dispatchd's connections (the store, its subscriptions, the relays, the stats
// flusher) with nothing to tell them apart, and the event relay's own "redis error" came again
// every 10 s for the whole outage. Each connection now has a name, in Redis (CLIENT SETNAME
// `dispatch:<name>`) and in its log lines (`connection`), and an outage of any length logs at most
// its loss, each distinct error and its recovery, per connection.
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectRedis, whenReady, type RedisClient } from '../../src/store/redis';
import type { Logger } from '../../src/log';
import { startDaemon, type Daemon } from '../helpers/daemon';
import { startRedis, type TestRedis } from '../helpers/redis-server';

jest.setTimeout(90_000);

const dir = mkdtempSync(join(tmpdir(), 'connection-names-'));
let redis: TestRedis;
let daemon: Daemon | undefined;
const clients: RedisClient[] = [];

beforeAll(async () => {
  redis = await startRedis({ own: true });
});
afterAll(async () => {
  for (const client of clients) client.disconnect();
  if (daemon && daemon.child.exitCode === null) {
    daemon.child.kill('SIGTERM');
    await daemon.exited;
  }
  await redis?.close();
  rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits (bounded) until `done`. */
async function until(done: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(50);
  }
}

/** The names of the clients connected to the test's Redis (CLIENT SETNAME), sorted. */
const clientNames = () =>
  redis
    .cli('CLIENT', 'LIST')
    .split('\n')
    .map((line) => / name=(\S*)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined && name !== '')
    .sort();

/** Every stderr line of the daemon, parsed (a line that is not JSON fails the test). */
const lines = (): Record<string, unknown>[] =>
  daemon!
    .stderr()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** The connection lines Redis going away and coming back gives (connect.ts's own). */
const CONNECTION_LINE = /^redis (connection lost|error|connection restored)/;

test('each of dispatchd\'s connections is named, in Redis and in its log lines; an 11 s outage logs at most 3 lines per connection', async () => {
  // A shared cap and an approval policy: the guards' connections too.
  const config = join(dir, 'tools.yaml');
  writeFileSync(config, `tools:
  - name: capped
    effect: read_only
    builtin: { name: echo }
  - name: asked
    effect: read_only
    builtin: { name: echo }
policies:
  - match: capped
    concurrency: { max_in_flight: 1, wait_ms: 1000, shared: true }
  - match: asked
    decide: ask
    reason: a person decides
`);
  daemon = await startDaemon(['--redis', redis.url, '--config', config], { DISPATCH_LOG_LEVEL: 'info' });
  const expected = ['store', 'store-subscriber', 'registry-subscriber', 'events', 'events-subscriber', 'stats', 'slots', 'approvals', 'approvals-subscriber', 'workers', 'workers-subscriber'].map((name) => `dispatch:${name}`);
  await until(() => expected.every((name) => clientNames().includes(name)), `clients named ${expected.join(', ')} (now ${clientNames().join(', ')})`);
  expect(clientNames().filter((name) => name === 'dispatch')).toEqual([]);

  const before = lines().length;
  await redis.stop();
  // Longer than the event relay's 10 s throttle would need to log its "redis error" again: the
  // connections' own lines must not grow with the outage.
  await sleep(11_000);
  await redis.start();
  await until(() => lines().slice(before).filter((line) => line.message === 'redis connection restored').length >= expected.length - 2, 'the connections restored');
  // A moment for anything late (a last reconnection's error).
  await sleep(1_500);

  const outage = lines().slice(before);
  const connectionLines = outage.filter((line) => CONNECTION_LINE.test(String(line.message)));
  expect(connectionLines.length).toBeGreaterThan(0);
  // Every one names its connection, which is one of dispatchd's.
  expect(connectionLines.filter((line) => !expected.includes(`dispatch:${String(line.connection)}`))).toEqual([]);
  const perConnection = new Map<string, string[]>();
  for (const line of connectionLines) perConnection.set(String(line.connection), [...(perConnection.get(String(line.connection)) ?? []), String(line.message)]);
  for (const [connection, messages] of perConnection) {
    // The loss, one error (Redis refusing the connection, the same text each retry), the recovery.
    expect({ connection, messages: messages.sort() }).toEqual({ connection, messages: ['redis connection lost; reconnecting', 'redis connection restored', 'redis error'] });
  }
  // The store's, at least, told apart from the relays'.
  expect([...perConnection.keys()]).toEqual(expect.arrayContaining(['store', 'events', 'events-subscriber', 'store-subscriber']));
  // No other line repeats with the outage: the event relay's "redis error" was one more each 10 s.
  expect(outage.filter((line) => /redis error/.test(String(line.message)) && line.connection === undefined)).toEqual([]);
  daemon.child.kill('SIGTERM');
  expect(await daemon.exited).toBe(0);
});

test('a connection that drops each time it is back logs its loss once, the rest throttled, each line with its name', async () => {
  const warnings: { message: string; fields?: Record<string, unknown> }[] = [];
  const infos: { message: string; fields?: Record<string, unknown> }[] = [];
  const logger: Logger = { debug() {}, info: (message, fields) => void infos.push({ message, fields }), warn: (message, fields) => void warnings.push({ message, fields }), error() {} };
  const client = connectRedis(redis.url, { name: 'flappy', logger, maxReconnectDelayMs: 50 });
  clients.push(client);
  expect(await whenReady(client, 5_000)).toBe(true);
  expect(clientNames()).toContain('dispatch:flappy');
  for (let i = 0; i < 5; i++) {
    redis.cli('CLIENT', 'KILL', 'TYPE', 'normal');
    await until(() => client.status !== 'ready', 'the connection dropped', 5_000).catch(() => undefined);
    expect(await whenReady(client, 5_000)).toBe(true);
  }
  const lost = warnings.filter((w) => w.message === 'redis connection lost; reconnecting');
  expect(lost).toEqual([{ message: 'redis connection lost; reconnecting', fields: { connection: 'flappy', mode: 'standalone' } }]);
  const restored = infos.filter((i) => i.message === 'redis connection restored');
  expect(restored).toHaveLength(1);
  expect(restored[0]!.fields).toMatchObject({ connection: 'flappy', mode: 'standalone', downMs: expect.any(Number) });
});
