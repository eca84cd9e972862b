import { Redis } from 'ioredis';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { maxInFlight, type ToolServer, json } from '../helpers/servers';
import type { TestRedis } from '../helpers/redis-server';
import { until } from './helpers';
import { closeReplicaPair, startReplicaPair, type Replica } from './replica-pair';
import { expectBurstKeptToShare } from './tenant-share-checks';
import { callAs, callsOf, plainTool, TWO_TENANTS_AUTH } from './two-tenants';

// Tenant shares of `shared: true` guards while their Redis is away: each replica falls back to its
// own cap (`fallback_max_in_flight`) and its own rate limits, and a tenant's share holds there too
// (at most the fallback cap), so one tenant's burst still cannot take a shared tool from the others
// during an outage. Once Redis is back, the shares are counted in Redis again, for both together.

jest.setTimeout(30_000);

const yaml = (url: string) => `${TWO_TENANTS_AUTH}
tools:
${plainTool(url, 'capped')}${plainTool(url, 'narrow')}${plainTool(url, 'paced')}
policies:
  - match: capped
    concurrency: { max_in_flight: 3, max_in_flight_per_tenant: 2, shared: true }
  - match: narrow
    concurrency: { max_in_flight: 4, max_in_flight_per_tenant: 3, shared: true, fallback_max_in_flight: 2 }
  - match: paced
    rate: { per_minute: 1, burst: 1, shared: true, per_tenant: true }
`;

let redis: TestRedis;
let tools: ToolServer;
let a: Replica;
let b: Replica;
beforeAll(async () => ({ redis, tools, a, b } = await startReplicaPair(yaml, { '/capped': json({ ok: true }, 400), '/narrow': json({ ok: true }, 400), '/paced': json({ ok: true }) })));
afterAll(() => closeReplicaPair({ redis, tools, a, b }));
beforeEach(() => tools.received.splice(0));

const outcomes = (results: readonly { isError: boolean; error?: { message: string } }[]) => results.map((r) => (r.isError ? r.error!.message.replace(/\d+ ms/, 'N ms') : 'ok'));

test("with Redis away, a replica's own cap keeps each tenant to its share, and nothing hangs", async () => {
  await redis.stop();
  try {
    const started = Date.now();
    await expectBurstKeptToShare([a], tools, 'on this dispatch replica');
    expect(Date.now() - started).toBeLessThan(5_000);
  } finally {
    await redis.start();
  }
});

test('with Redis away, a share larger than fallback_max_in_flight is cut to it: the tenant holds at most the fallback', async () => {
  await redis.stop();
  try {
    const burst = Promise.all([0, 1, 2].map(() => callAs(a, 'acme', 'narrow')));
    await until(() => tools.count('/narrow') === 2);
    const theirs = await callAs(a, 'globex', 'narrow');
    const mine = await burst;
    expect(mine.filter((r) => !r.isError)).toHaveLength(2);
    expect(mine.find((r) => r.isError)?.error?.kind).toBe(ErrorKind.UNAVAILABLE);
    // The fallback cap of 2 is the tool's total on this replica: globex finds it taken by acme's two.
    expect(outcomes([theirs])).toEqual(['tool "narrow" is at its limit of 2 calls running at once on this dispatch replica; this call was not executed']);
    expect(maxInFlight(tools.received)).toBe(2);
  } finally {
    await redis.start();
  }
});

test("with Redis away, a per-tenant shared rate falls back to the replica's own limit of each tenant: one tenant's turns leave the other's", async () => {
  await redis.stop();
  try {
    const mine = [await callAs(a, 'acme', 'paced'), await callAs(a, 'acme', 'paced')];
    const theirs = await callAs(a, 'globex', 'paced');
    expect(outcomes(mine)).toEqual(['ok', 'tool "paced" is at its rate limit of 1 call per minute (burst 1) for this tenant on this dispatch replica; its next turn is in N ms; this call was not executed']);
    expect(outcomes([theirs])).toEqual(['ok']);
    expect(callsOf(tools.received, 'globex', '/paced')).toHaveLength(1);
  } finally {
    await redis.start();
  }
});

test('once Redis is back, the shares are counted in Redis again, for both replicas together', async () => {
  // The replicas reconnect by themselves: wait for both slots connections to be ready, not a time.
  // A connection is listed once it has named itself (CLIENT SETNAME), but ioredis refuses its
  // commands until it has had the answer to its ready check (INFO) after that, and a replica's call
  // then falls back to its own cap (failed once in CI): wait until Redis has run both INFOs, then
  // one round trip more, so that the replicas (in this process) have read their answers.
  const direct = new Redis(redis.url);
  try {
    const ready = async () => ((await direct.client('LIST')) as string).split('\n').filter((line) => line.includes('name=dispatch:slots ') && !/ cmd=(NULL|client\|setname) /.test(line)).length;
    let slots = 0;
    for (let i = 0; i < 100 && slots < 2; i++) {
      slots = await ready();
      if (slots < 2) await new Promise((r) => setTimeout(r, 50));
    }
    expect(slots).toBe(2);
    await direct.ping();
  } finally {
    direct.disconnect();
  }
  await expectBurstKeptToShare([a, b], tools, 'on all dispatch replicas together');
});
