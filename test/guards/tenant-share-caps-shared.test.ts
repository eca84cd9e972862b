import { Redis } from 'ioredis';
import type { TestRedis } from '../helpers/redis-server';
import { json, type ToolServer } from '../helpers/servers';
import { closeReplicaPair, startReplicaPair, type Replica } from './replica-pair';
import { expectBurstKeptToShare, expectWaitersKeptToShare, SHARED_SHARE_POLICIES } from './tenant-share-checks';
import { plainTool, TWO_TENANTS_AUTH } from './two-tenants';

// A `shared: true` cap with `max_in_flight_per_tenant`, over two apps sharing a real Redis:
// take-slot.lua counts the tool's leases and the calling tenant's in one step, so the total holds
// for both replicas together and no tenant holds more than its share on them together, and a
// tenant's calls waiting in line for its own share do not hold up another tenant's. Before, one
// tenant's burst over both replicas took every slot and the other tenant's calls were refused.

jest.setTimeout(30_000);

const yaml = (url: string) => `${TWO_TENANTS_AUTH}
tools:
${plainTool(url, 'capped')}${plainTool(url, 'queued')}
policies:
${SHARED_SHARE_POLICIES}`;

let redis: TestRedis;
let tools: ToolServer;
let a: Replica;
let b: Replica;
beforeAll(async () => ({ redis, tools, a, b } = await startReplicaPair(yaml, { '/capped': json({ ok: true }, 400), '/queued': json({ ok: true }, 250) })));
afterAll(() => closeReplicaPair({ redis, tools, a, b }));
beforeEach(() => tools.received.splice(0));

test("one tenant's burst over both replicas takes its share only; the other's call runs; the total holds for both together", async () => {
  await expectBurstKeptToShare([a, b], tools, 'on all dispatch replicas together');
  // Every lease is given back (releases are sent as the calls end, not awaited by them).
  const direct = new Redis(redis.url);
  try {
    let held = -1;
    for (let i = 0; i < 100 && held !== 0; i++) {
      held = await direct.zcard('dispatch:slots:{capped}');
      if (held !== 0) await new Promise((r) => setTimeout(r, 10));
    }
    expect(held).toBe(0);
  } finally {
    direct.disconnect();
  }
});

test("with wait_ms, one tenant's calls waiting in the shared line for its own share never hold up another tenant's", () => expectWaitersKeptToShare([a, b], tools));
