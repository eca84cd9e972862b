import { randomUUID } from 'node:crypto';
import { ErrorKind, type ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { REQUIRED_ACL } from '../../src/store/redis/misconfiguration';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { until } from '../helpers/until';

// A side-effecting call whose claim Redis refused read "could not record this call (unreachable,
// or out of room)" whatever the reason: an ACL changed at runtime (scripts or the key pattern
// taken away) looked like an outage to the caller, only the log naming the ACL. The caller now
// reads why, when Redis's answer tells (no key, user or server named): permission, out of memory,
// no answer in time, unreachable, taking no writes (a replica after a failover). Still STORE_UNAVAILABLE, recoverable, the tool not run.
// A real redis-server with an ACL user, dispatch connected as that user.

jest.setTimeout(60_000);

const NOT_RUN = 'so this side-effecting call was not executed';

let redis: TestRedis;
/** dispatch's ACL user, with exactly the documented rules (docs/redis.md, "ACL"). */
const payer = () => redis.cli('ACL', 'SETUSER', 'payer', 'reset', 'on', '>pw', ...REQUIRED_ACL.split(' '));
let tools: ToolServer;
let app: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  redis = await startRedis({ own: true });
  payer();
  tools = await startToolServer({ '/pay': (_req, res) => void res.writeHead(200).end(`paid ${tools.count('/pay')}`) });
  const yaml = `limits: { store_timeout_ms: 500 }
tools:
  - { name: pay, effect: side_effect, retry: { max_attempts: 1 }, input_schema: '{"type":"object"}', http: { url: "${tools.url}/pay" } }
`;
  app = await startApp(yaml, { redisUrl: `redis://payer:pw@127.0.0.1:${redis.port}/0` });
});
afterAll(async () => {
  await app?.close();
  await tools?.close();
  await redis?.close();
});

const pay = async (): Promise<ToolResult> => (await app.dispatch.dispatch({ sessionId: `s-${randomUUID()}`, calls: [{ id: `c_${randomUUID()}`, name: 'pay', arguments: '{"ref":"r1"}' }] })).results[0]!;

/** A call to `pay` refused before it ran, STORE_UNAVAILABLE and recoverable: its message. */
async function refused(): Promise<string> {
  const ran = tools.count('/pay');
  const result = await pay();
  expect(result.isError).toBe(true);
  expect(result.error).toMatchObject({ kind: ErrorKind.STORE_UNAVAILABLE, recoverable: true });
  expect(tools.count('/pay')).toBe(ran);
  return result.error!.message;
}

test('scripts taken from the ACL user at runtime: the caller reads that the store refused the write for lack of permission', async () => {
  expect((await pay()).output).toBe('paid 1');
  redis.cli('ACL', 'SETUSER', 'payer', '-@scripting');
  try {
    expect(await refused()).toBe(`the idempotency store refused to record this call for lack of permission (its ACL does not allow the write), ${NOT_RUN}`);
  } finally {
    redis.cli('ACL', 'SETUSER', 'payer', '+@scripting');
  }
  expect((await pay()).output).toBe('paid 2');
});

test("the key pattern taken from the ACL user at runtime: the same, naming no key", async () => {
  redis.cli('ACL', 'SETUSER', 'payer', 'resetkeys', '~app:*');
  try {
    const message = await refused();
    expect(message).toBe(`the idempotency store refused to record this call for lack of permission (its ACL does not allow the write), ${NOT_RUN}`);
    expect(message).not.toMatch(/dispatch:|payer|NOPERM/);
  } finally {
    redis.cli('ACL', 'SETUSER', 'payer', '~dispatch:*');
  }
});

test('a command the claim script runs taken from the ACL user (Redis 7.0 answers ERR, not NOPERM): the same', async () => {
  redis.cli('ACL', 'SETUSER', 'payer', '-zadd');
  try {
    expect(await refused()).toBe(`the idempotency store refused to record this call for lack of permission (its ACL does not allow the write), ${NOT_RUN}`);
  } finally {
    redis.cli('ACL', 'SETUSER', 'payer', '+zadd');
  }
});

test('redis out of memory (noeviction): the caller reads that the store is out of memory', async () => {
  redis.cli('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
  redis.cli('CONFIG', 'SET', 'maxmemory', '1');
  try {
    expect(await refused()).toBe(`the idempotency store is out of memory and refused to record this call, ${NOT_RUN}`);
  } finally {
    redis.cli('CONFIG', 'SET', 'maxmemory', '0');
  }
  expect((await pay()).isError).toBe(false);
});

test('redis not answering (stopped): the caller reads that the store did not answer in time', async () => {
  redis.signal('SIGSTOP');
  try {
    expect(await refused()).toBe(`the idempotency store did not answer in time to record this call, ${NOT_RUN}`);
  } finally {
    redis.signal('SIGCONT');
  }
  await until(async () => ((await pay()).isError ? undefined : true), 'redis answering again', 10_000);
});

test('redis made a replica (as after a failover: READONLY): the caller reads that the store takes no writes for now', async () => {
  const master = await startRedis({ own: true });
  redis.cli('REPLICAOF', '127.0.0.1', String(master.port));
  try {
    await until(() => (redis.cli('INFO', 'replication').includes('master_link_status:up') ? true : undefined), 'the replica synced', 10_000);
    expect(await refused()).toBe(`the idempotency store takes no writes for now (failing over, or loading its data) and could not record this call, ${NOT_RUN}`);
  } finally {
    redis.cli('REPLICAOF', 'NO', 'ONE');
    await master.close();
  }
  await until(async () => ((await pay()).isError ? undefined : true), 'redis a master again', 10_000);
});

test('redis gone: the caller reads that the store could not be reached', async () => {
  await redis.stop();
  // The client sees the connection closed (at once, on a killed server's loopback socket).
  await new Promise((r) => setTimeout(r, 300));
  try {
    expect(await refused()).toBe(`the idempotency store could not be reached to record this call, ${NOT_RUN}`);
  } finally {
    await redis.start();
    payer();
  }
  await until(async () => ((await pay()).isError ? undefined : true), 'redis back', 10_000);
});
