import * as grpc from '@grpc/grpc-js';
import { authYaml, bearer, startAuthApp, statusOf, type AuthApp, type TestToken } from '../security/support/auth-app';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startToolServer, type ToolServer } from '../helpers/servers';

// ReadResults running at once on a replica are bounded, per tenant (16) and in all (64): one
// tenant reading many pages at once (24 whole-result GETs made Redis time out every tenant's
// steps) is refused RESOURCE_EXHAUSTED past its share, at once, and its reads do not take every
// place. Redis is frozen (SIGSTOP) so that the reads let in stay running.

jest.setTimeout(60_000);

const TENANTS: TestToken[] = [1, 2, 3, 4, 5].map((n) => ({ token: `reader-${n}-token-0123456789`, tenant: `reader-${n}`, scopes: ['dispatch'] }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let redis: TestRedis;
let tools: ToolServer;
let d: AuthApp;
const handles: string[] = [];
beforeAll(async () => {
  redis = await startRedis({ own: true });
  tools = await startToolServer({ '/long': (_req, res) => void res.writeHead(200).end('y'.repeat(20_000)) });
  d = await startAuthApp(
    `limits: { store_timeout_ms: 20000 }
tools:
  - name: long
    effect: read_only
    skip_memoize: true
    http: { url: "${tools.url}/long" }
${authYaml(TENANTS)}`,
    { daemon: { redisUrl: redis.url } },
  );
  for (const t of TENANTS) {
    const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'long', arguments: '{}' }] }, bearer(t.token));
    handles.push(results[0]!.resultHandle);
  }
});
afterAll(async () => {
  redis?.signal('SIGCONT');
  await d?.close();
  await tools?.close();
  await redis?.close();
});

const read = (n: number) => d.dispatch.readResult({ resultHandle: handles[n]!, offset: 0, limit: 5 }, bearer(TENANTS[n]!.token));

/** Reads started at once, and the outcomes of those that have ended so far. */
function readsOf(tenants: number[]) {
  const ended: Array<{ code: grpc.status | 'ok'; details: string }> = [];
  const all = tenants.map((n) => statusOf(read(n)).then((outcome) => void ended.push(outcome)));
  return { ended, all: Promise.all(all) };
}

test('past 16 ReadResults of a tenant, or 64 in all, a read is refused at once with RESOURCE_EXHAUSTED; those let in finish once the store answers', async () => {
  expect(handles.every((h) => h !== '')).toBe(true);
  redis.signal('SIGSTOP');
  const first = readsOf(Array<number>(17).fill(0));
  await sleep(500);
  // The 16 let in wait for the frozen store; one is refused at once.
  expect(first.ended).toEqual([{ code: grpc.status.RESOURCE_EXHAUSTED, details: 'tenant "reader-1" is running its limit of 16 ReadResult calls at once on this dispatch replica; try again shortly, or read fewer pages at once' }]);
  // Other tenants still get in, up to the replica's 64.
  const others = readsOf([...Array<number>(16).fill(1), ...Array<number>(16).fill(2), ...Array<number>(16).fill(3), 4]);
  await sleep(500);
  expect(others.ended).toEqual([{ code: grpc.status.RESOURCE_EXHAUSTED, details: 'this dispatch replica is running its limit of 64 ReadResult calls at once; try again shortly, or read fewer pages at once' }]);

  redis.signal('SIGCONT');
  await Promise.all([first.all, others.all]);
  const ok = [...first.ended, ...others.ended].filter((o) => o.code === 'ok');
  expect(ok).toHaveLength(64);
  // Their places are given back.
  await expect(read(4)).resolves.toMatchObject({ text: 'yyyyy', totalChars: 20_000 });
  await expect(read(0)).resolves.toMatchObject({ text: 'yyyyy' });
});
