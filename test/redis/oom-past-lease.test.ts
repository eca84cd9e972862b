import { ErrorKind, type ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { until } from '../helpers/until';

// A Redis with maxmemory and noeviction refuses every write once full: the finish step of a call
// that ran is refused, and its completion waits in the replica's memory. Before, Redis expired the
// call's claim at the lease's end (timeout + 5 s), so once memory came back an identical call, on
// either replica, claimed and ran the tool again before the waiting completion was written. The
// replica that ran it now keeps the claim alive while the completion waits. A real redis-server
// (no persistence), two apps sharing it, and a side-effecting HTTP tool on loopback.

jest.setTimeout(60_000);

/** The tool's timeout: its claim's lease is this plus 5 s. */
const TIMEOUT_MS = 1_000;
const LEASE_MS = TIMEOUT_MS + 5_000;

type App = Awaited<ReturnType<typeof startApp>>;
let redis: TestRedis;
let tools: ToolServer;
let a: App;
let b: App;
const runs = new Map<string, number>();

/** Fills Redis past its maxmemory with one value, as spills or other writers would. */
function fill(): void {
  const used = Number(/\nused_memory:(\d+)/.exec(redis.cli('INFO', 'memory'))![1]);
  const max = Number(/\nmaxmemory:(\d+)/.exec(redis.cli('INFO', 'memory'))![1]);
  redis.cli('SETRANGE', 'filler', String(max - used + 256 * 1024), 'x');
}

beforeAll(async () => {
  redis = await startRedis({ own: true, extraArgs: ['--maxmemory', '16mb', '--maxmemory-policy', 'noeviction'] });
  tools = await startToolServer({
    '/pay': (req, res) => {
      const ref = String((req.body.arguments as { ref: string }).ref);
      runs.set(ref, (runs.get(ref) ?? 0) + 1);
      // Redis fills up while the tool runs: its finish step is refused.
      if (ref === 'full') fill();
      res.writeHead(200).end(`paid ${ref}`);
    },
  });
  const config = `tools:
  - name: pay
    effect: side_effect
    timeout_ms: ${TIMEOUT_MS}
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object","properties":{"ref":{"type":"string"}},"required":["ref"]}'
    http: { url: "${tools.url}/pay" }
`;
  a = await startApp(config, { redisUrl: redis.url });
  b = await startApp(config, { redisUrl: redis.url });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await tools?.close();
  await redis?.close();
});

const pay = async (app: App, ref: string): Promise<ToolResult> => (await app.dispatch.dispatch({ sessionId: 'oom', calls: [{ id: `c-${ref}`, name: 'pay', arguments: JSON.stringify({ ref }) }] })).results[0]!;
const kindOf = (r: ToolResult) => (r.isError ? ErrorKind[r.error!.kind] : r.idempotentReplay ? 'REPLAY' : 'RAN');

test('Redis full past the lease of a call that ran: once memory is back, identical calls on either replica do not run it again, and replay it once its completion is written', async () => {
  const first = await pay(a, 'full');
  expect(first).toMatchObject({ isError: false, output: 'paid full' });
  expect(redis.cli('SET', 'probe', 'x')).toMatch(/OOM/);
  // Within the lease, the claim is still in Redis.
  expect(kindOf(await pay(b, 'full'))).toBe('IN_PROGRESS');
  await new Promise((r) => setTimeout(r, LEASE_MS + 1_000));
  // Still full, past the lease: the claim is still held (before, it had expired and the new claim
  // was refused, STORE_UNAVAILABLE); the replica that ran the call answers from its waiting completion.
  expect(kindOf(await pay(b, 'full'))).toBe('IN_PROGRESS');
  expect(await pay(a, 'full')).toMatchObject({ isError: false, output: 'paid full', idempotentReplay: true });
  redis.cli('DEL', 'filler');
  // Memory is back; the waiting completion is written within a second (the next retry). Before
  // that, neither replica runs the call again.
  const onB = await pay(b, 'full');
  const onA = await pay(a, 'full');
  expect(runs.get('full')).toBe(1);
  expect(['IN_PROGRESS', 'REPLAY']).toContain(kindOf(onB));
  expect(['IN_PROGRESS', 'REPLAY']).toContain(kindOf(onA));
  const replayed = await until(async () => {
    const r = await pay(b, 'full');
    return kindOf(r) === 'REPLAY' ? r : undefined;
  }, 'the waiting completion to be written');
  expect(replayed).toMatchObject({ isError: false, output: 'paid full', idempotentReplay: true });
  expect(runs.get('full')).toBe(1);
  // New calls claim and run as before.
  expect(kindOf(await pay(b, 'after'))).toBe('RAN');
});
