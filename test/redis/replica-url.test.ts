import { randomUUID } from 'node:crypto';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { createLogger } from '../../src/log';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer } from '../helpers/servers';

// A Redis chaos probe: a URL naming a replica (not the master, nor Sentinel) served with no word
// at start, every side-effecting call failing STORE_UNAVAILABLE "takes no writes for now (failing
// over, or loading its data)", which waiting never cures. Start-up now warns that the server is a
// read-only replica, naming its master. Two real redis-servers, one replicating the other.

jest.setTimeout(60_000);

let master: TestRedis;
let replica: TestRedis;
beforeAll(async () => {
  master = await startRedis({ own: true });
  replica = await startRedis({ own: true, extraArgs: ['--replicaof', '127.0.0.1', String(master.port)] });
});
afterAll(async () => {
  await replica?.close();
  await master?.close();
});

const config = (url: string) => `tools:\n  - { name: pay, effect: side_effect, input_schema: '{"type":"object"}', http: { url: "${url}/pay" } }\n`;

/** One side-effecting call through an app on `redisUrl`: its result, and the app's log lines. */
async function payOnce(redisUrl: string) {
  const tools = await startToolServer({ '/pay': (_req, res) => void res.writeHead(200).end('paid') });
  const lines: string[] = [];
  const app = await startApp(config(tools.url), { redisUrl, logger: createLogger('info', (line) => lines.push(line) > 0) });
  try {
    const [result] = (await app.dispatch.dispatch({ sessionId: `s-${randomUUID()}`, calls: [{ id: 'c1', name: 'pay', arguments: '{}' }] })).results;
    return { result: result!, lines };
  } finally {
    await app.close();
    await tools.close();
  }
}

test('a URL naming a replica: one warning at start naming its master; side-effecting calls fail closed', async () => {
  const { result, lines } = await payOnce(replica.url);
  expect(result.error?.kind).toBe(ErrorKind.STORE_UNAVAILABLE);
  const warned = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => String(l.message).startsWith('redis is a read-only replica'));
  expect(warned).toEqual([expect.objectContaining({ level: 'warn', master: `127.0.0.1:${master.port}` })]);
});

test('a URL naming the master: no such warning', async () => {
  const { result, lines } = await payOnce(master.url);
  expect(result).toMatchObject({ isError: false, output: 'paid' });
  expect(lines.filter((l) => l.includes('read-only replica'))).toEqual([]);
});
