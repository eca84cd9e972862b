import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { createRegistryClient } from '../../src/client';
import { runDaemon, startDaemon } from '../helpers/daemon';
import { failedStart } from '../helpers/startup-line';
import { startRedis } from '../helpers/redis-server';

test('dispatchd refuses a bad --redis URL at start, naming the accepted forms and hiding the password', async () => {
  const run = await runDaemon(['--listen', '127.0.0.1:0', '--redis', 'redis-sentinel://:hunter2@127.0.0.1:26379']);
  expect(failedStart(run)).toEqual({
    exit: 2,
    level: 'error',
    code: 'invalid_redis_url',
    message: expect.stringContaining('dispatchd: --redis: bad Redis URL "redis-sentinel://***@127.0.0.1:26379": the master name is missing (redis-sentinel://host:26379/MASTER) (expected redis://[:password@]host:port/db,'),
  });
  expect(run.stderr).not.toContain('hunter2');
});

test('the config file can name the Redis store (redis: { url }), and a bad redis section is named', async () => {
  const redis = await startRedis();
  const dir = mkdtempSync(join(tmpdir(), 'redis-config-'));
  const config = join(dir, 'config.yaml');
  writeFileSync(config, `redis: { url: "${redis.url}" }\ntools: []\n`);
  const daemon = await startDaemon(['--config', config]);
  const registry = createRegistryClient(`127.0.0.1:${daemon.port}`);
  try {
    expect(daemon.stderr()).toContain('"redis":true');
    await registry.registerTools({ tools: [{ name: 'shared', effect: Effect.READ_ONLY, executor: { case: 'builtin', value: { name: 'echo' } } }] });
    expect(redis.cli('--scan', '--pattern', 'dispatch:tools:*')).toContain('dispatch:tools:');
  } finally {
    registry.close();
    daemon.child.kill('SIGKILL');
    await redis.close();
  }
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'redis: { host: localhost }\n');
  const run = await runDaemon(['--config', bad, '--listen', '127.0.0.1:0']);
  expect(failedStart(run)).toEqual({ exit: 1, level: 'error', code: 'invalid_config', message: expect.stringContaining(`${bad}: redis.host: unknown key`) });
});
