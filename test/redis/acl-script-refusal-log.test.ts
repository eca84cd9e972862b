import { randomUUID } from 'node:crypto';
import type { Logger } from '../../src/log';
import { connectRedis, createRedisStore, whenReady } from '../../src/store/redis';
import { REQUIRED_ACL } from '../../src/store/redis/misconfiguration';
import { startRedis, type TestRedis } from '../helpers/redis-server';

// A command dispatch's scripts run, taken from its ACL user after start: Redis 7.0 answers the
// script ERR "... The user executing the script can't run this command ...", not NOPERM. The log
// named the ACL problem for NOPERM replies only, so this one read as any script error; now it
// names the user and the ACL dispatch needs, as for NOPERM. A real redis-server with an ACL user.

jest.setTimeout(30_000);

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis({ own: true });
});
afterAll(async () => {
  // ioredis ends a socket within 2 s of disconnect(), by a timer that outlives a socket already closed.
  await new Promise((r) => setTimeout(r, 2_100));
  await redis?.close();
});

test("a script's command the ACL denies (ERR, not NOPERM) is logged as the ACL problem, naming the user and the ACL dispatch needs", async () => {
  redis.cli('ACL', 'SETUSER', 'nozadd', 'reset', 'on', '>pw', ...REQUIRED_ACL.split(' '));
  const warnings: { message: string; error: unknown }[] = [];
  const logger: Logger = { debug() {}, info() {}, error() {}, warn: (message, fields) => void warnings.push({ message, error: fields?.error }) };
  const client = connectRedis(`redis://nozadd:pw@127.0.0.1:${redis.port}/0`, { env: {}, maxReconnectDelayMs: 100, logger });
  const store = createRedisStore(client, { logger });
  try {
    expect(await whenReady(client, 5_000)).toBe(true);
    // Taken after start (the probe at ready would have refused it): the claim script's ZADD.
    redis.cli('ACL', 'SETUSER', 'nozadd', '-zadd');
    const scope = { tenant: 't', sessionId: `s-${randomUUID()}` };
    const refusal = await store.beginAttempt({ scope, op: 'o', claim: { key: 'k', leaseMs: 5_000 } }).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(refusal?.message).toMatch(/The user executing the script can't/);
    expect(refusal?.message).not.toMatch(/NOPERM/);
    const acl = warnings.filter((w) => w.message.startsWith('redis refused a command dispatch needs to user "nozadd"'));
    expect(acl.map((w) => w.message)).toEqual([`redis refused a command dispatch needs to user "nozadd": grant it in the user's ACL; dispatch needs ${REQUIRED_ACL}`]);
    expect(acl[0]!.error).toMatch(/^ERR .*The user executing the script can't/);
  } finally {
    await store.close();
  }
});
