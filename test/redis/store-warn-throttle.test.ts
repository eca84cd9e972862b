import { randomUUID } from 'node:crypto';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { createLogger } from '../../src/log';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';

// A Redis chaos probe: a Redis out of memory (or read-only, or gone) wrote `store unavailable at
// claim` at warn for every attempt: five calls, ten lines; at 1,000 calls a second, ~2,000 lines a
// second. The pipeline's store warnings are now logged at most once per 10 s each, the next line
// saying how many were held back. A real redis-server with maxmemory and noeviction.

jest.setTimeout(60_000);

let redis: TestRedis;
let tools: ToolServer;
beforeAll(async () => {
  redis = await startRedis({ own: true });
  tools = await startToolServer({ '/pay': (_req, res) => void res.writeHead(200).end('paid') });
});
afterAll(async () => {
  await tools?.close();
  await redis?.close();
});

test('a Redis refusing writes (OOM): every side-effecting call fails closed, one warn line for all of them', async () => {
  const lines: string[] = [];
  const app = await startApp(`tools:\n  - { name: pay, effect: side_effect, input_schema: '{"type":"object"}', http: { url: "${tools.url}/pay" } }\n`, {
    redisUrl: redis.url,
    logger: createLogger('info', (line) => lines.push(line) > 0),
  });
  try {
    redis.cli('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
    redis.cli('CONFIG', 'SET', 'maxmemory', '1');
    for (let i = 0; i < 5; i++) {
      const [result] = (await app.dispatch.dispatch({ sessionId: `s-${randomUUID()}`, calls: [{ id: 'c1', name: 'pay', arguments: `{"n":${i}}` }] })).results;
      expect(result!.error?.kind).toBe(ErrorKind.STORE_UNAVAILABLE);
    }
  } finally {
    redis.cli('CONFIG', 'SET', 'maxmemory', '0');
    await app.close();
  }
  expect(tools.count('/pay')).toBe(0);
  expect(lines.filter((l) => l.includes('"message":"store unavailable at claim"'))).toHaveLength(1);
});
