import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';

// Without authentication every caller is tenant `default`, the only tenant, so it may run every
// one of a replica's 64 ReadResults at once: it was held to the per-tenant 16 (found in a review),
// a quarter of the places never usable, as for the other per-tenant shares.

jest.setTimeout(30_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let redis: TestRedis;
let tools: ToolServer;
let d: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  redis = await startRedis({ own: true });
  tools = await startToolServer({ '/long': (_req, res) => void res.writeHead(200).end('y'.repeat(20_000)) });
  d = await startApp(`limits: { store_timeout_ms: 20000 }\ntools:\n  - { name: long, effect: read_only, skip_memoize: true, http: { url: "${tools.url}/long" } }\n`, { redisUrl: redis.url });
});
afterAll(async () => {
  redis?.signal('SIGCONT');
  await d?.close();
  await tools?.close();
  await redis?.close();
});

test('one tenant (no auth) runs 64 ReadResults at once, none refused; the 65th is', async () => {
  const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'long', arguments: '{}' }] });
  const handle = results[0]!.resultHandle;
  redis.signal('SIGSTOP');
  const ended: string[] = [];
  const reads = Array.from({ length: 65 }, () =>
    d.dispatch.readResult({ resultHandle: handle, offset: 0, limit: 5 }).then(
      () => void ended.push('ok'),
      (e: { details?: string }) => void ended.push(e.details ?? 'error'),
    ),
  );
  await sleep(500);
  expect(ended).toEqual(['this dispatch replica is running its limit of 64 ReadResult calls at once; try again shortly, or read fewer pages at once']);
  redis.signal('SIGCONT');
  await Promise.all(reads);
  expect(ended.filter((e) => e === 'ok')).toHaveLength(64);
});
