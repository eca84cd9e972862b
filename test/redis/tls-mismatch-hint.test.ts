import { createLogger } from '../../src/log';
import { connectRedis, whenReady, type RedisClient } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { until } from '../helpers/until';

// A Redis chaos probe: `rediss://` against a Redis that speaks plain TCP logged only `connect
// ETIMEDOUT` every few seconds (the TCP connection was made: the server waits for a command, the
// client for the handshake), with Node's DEP0123 warning for an IP address as the TLS server name.
// The warning now carries a hint naming the TLS mismatch, and no server name is set for an IP.

jest.setTimeout(30_000);

let redis: TestRedis;
let client: RedisClient | undefined;
beforeAll(async () => {
  redis = await startRedis({ own: true });
});
afterAll(async () => {
  client?.disconnect();
  await new Promise((r) => setTimeout(r, 2_100));
  await redis?.close();
});

test('rediss:// to a plain Redis: the warning says the URL asks for TLS and what to do', async () => {
  const lines: string[] = [];
  client = connectRedis(`rediss://127.0.0.1:${redis.port}/0`, { env: {}, maxReconnectDelayMs: 200, logger: createLogger('info', (line) => lines.push(line) > 0) });
  // No server name for an IP address (Node's DEP0123 warned of one).
  expect((client as { options: { tls?: object } }).options.tls).toEqual({});
  expect(await whenReady(client, 500)).toBe(false);
  await until(() => lines.some((l) => l.includes('"hint"')) || undefined, 'a warning with a hint', 15_000);
  const hinted = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.hint !== undefined)!;
  expect(hinted).toMatchObject({ level: 'warn', hint: expect.stringMatching(/^the URL asks for TLS \(rediss:\/\/\); a server that speaks plain TCP never completes the handshake: use redis:\/\//) });
});
