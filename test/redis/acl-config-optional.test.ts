import { randomUUID } from 'node:crypto';
import { createLogger } from '../../src/log';
import { REQUIRED_ACL } from '../../src/store/redis/misconfiguration';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer } from '../helpers/servers';

// A Redis chaos probe: a user granted every documented rule but `+config|get` (the settings check's,
// which docs/redis.md calls optional) got, at every connection, a warning that "redis refused a
// command dispatch needs ... grant it in the user's ACL", besides the documented info line; and
// that warning, once a minute, could take the minute of a refusal that fails calls. Now a refused
// CONFIG GET gives the info line alone. A real redis-server with an ACL user.

jest.setTimeout(60_000);

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis({ own: true });
  redis.cli('ACL', 'SETUSER', 'noconfig', 'reset', 'on', '>pw', ...REQUIRED_ACL.replace(' +config|get', '').split(' '));
});
afterAll(() => redis?.close());

test('without +config|get: one info line on the settings, no ACL warning, and side-effecting calls run', async () => {
  const lines: string[] = [];
  const tools = await startToolServer({ '/pay': (_req, res) => void res.writeHead(200).end('paid') });
  const app = await startApp(`tools:\n  - { name: pay, effect: side_effect, input_schema: '{"type":"object"}', http: { url: "${tools.url}/pay" } }\n`, {
    redisUrl: `redis://noconfig:pw@127.0.0.1:${redis.port}/0`,
    logger: createLogger('info', (line) => lines.push(line) > 0),
  });
  try {
    const [result] = (await app.dispatch.dispatch({ sessionId: `s-${randomUUID()}`, calls: [{ id: 'c1', name: 'pay', arguments: '{}' }] })).results;
    expect(result).toMatchObject({ isError: false, output: 'paid' });
    await new Promise((r) => setTimeout(r, 300));
  } finally {
    await app.close();
    await tools.close();
  }
  expect(lines.filter((l) => /could not read redis settings \(CONFIG GET refused\)/.test(l))).toHaveLength(1);
  expect(lines.filter((l) => /"level":"warn"/.test(l) && /redis refused a command dispatch needs/.test(l))).toEqual([]);
});
