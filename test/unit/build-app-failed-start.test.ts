import { buildApp, type Plugin, type PluginFactory } from '../../src/app';
import { storePlugin } from '../../src/app/plugins/store-plugin';
import { parseConfig } from '../../src/config';
import { SILENT_LOGGER } from '../../src/log';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { until } from '../helpers/until';

// Found in review: a start that failed once the pipeline existed (a plugin's attach rejected: an
// MCP server that would not start, a stop signal while it started) closed the plugins alone. The
// store plugin hands its store to the app on attach, so nobody closed the store: its Redis
// connections stayed open, and an embedder's process did not exit.

jest.setTimeout(30_000);

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis({ own: true });
});
afterAll(() => redis.close());

/** Clients connected to the test's Redis, redis-cli's own connection left out. */
const clients = () => redis.cli('CLIENT', 'LIST').split('\n').filter((line) => line.includes('addr=') && !line.includes('cmd=client')).length;

test('a start whose attach fails after the store attached closes the store (its Redis connections)', async () => {
  const failing: PluginFactory = async (): Promise<Plugin> => ({
    name: 'failing',
    attach: () => Promise.reject(new Error('the MCP server would not start')),
  });
  await expect(buildApp(parseConfig('', 'c.yaml'), { redisUrl: redis.url, logger: SILENT_LOGGER }, [storePlugin, failing])).rejects.toThrow('the MCP server would not start');
  await until(() => (clients() === 0 ? true : undefined), 'the store to close its Redis connections', 3_000).catch(() => undefined);
  expect(clients()).toBe(0);
});
