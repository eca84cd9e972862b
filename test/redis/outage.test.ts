import { ErrorKind, type ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { useRedisApp } from '../helpers/redis-app';
import { json } from '../helpers/servers';

jest.setTimeout(60_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const paid = new Map<string, number>();

const env = useRedisApp({
  redis: { own: true, persistence: 'aof-always' },
  routes: {
    '/pay': async (req, res) => {
      const ref = String((req.body.arguments as { ref: string }).ref);
      paid.set(ref, (paid.get(ref) ?? 0) + 1);
      await sleep(150);
      res.writeHead(200).end(`paid ${ref}`);
    },
    '/look': json({ balance: 10 }),
  },
  config: (url) => `tools:
  - name: pay
    effect: side_effect
    timeout_ms: 3000
    input_schema: '{"type":"object","properties":{"ref":{"type":"string"}},"required":["ref"]}'
    http: { url: "${url}/pay" }
  - name: look
    effect: read_only
    input_schema: '{"type":"object"}'
    http: { url: "${url}/look" }
`,
});

const call = async (sessionId: string, name: string, args: unknown): Promise<ToolResult> =>
  (await env.app.dispatch.dispatch({ sessionId, calls: [{ id: `c_${Math.random().toString(36).slice(2)}`, name, arguments: JSON.stringify(args) }] })).results[0]!;

const kindOf = (r: ToolResult) => (r.isError ? ErrorKind[r.error!.kind] : r.idempotentReplay ? 'REPLAY' : 'OK');

test('Redis killed under load and restarted: no duplicate execution, fail-closed meanwhile, recovery by itself', async () => {
  const outcomes: { ref: string; kind: string; phase: string }[] = [];
  const lookErrors: string[] = [];
  let phase = 'before';
  let running = true;
  let next = 0;
  const worker = async () => {
    while (running) {
      const ref = `r${next++ % 30}`;
      const result = await call('load', 'pay', { ref });
      outcomes.push({ ref, kind: kindOf(result), phase });
      const look = await call('load', 'look', { n: next });
      if (look.isError) lookErrors.push(look.output);
    }
  };
  const workers = Array.from({ length: 6 }, worker);

  await sleep(1500);
  await env.redis.stop('SIGKILL');
  phase = 'outage';
  await sleep(300);
  const duringSide = await call('outage', 'pay', { ref: 'during-outage' });
  const duringRead = await call('outage', 'look', { q: 1 });
  await sleep(1500);
  await env.redis.start();
  phase = 'after';
  const recoveredAt = Date.now();
  let recovered: ToolResult | undefined;
  while (Date.now() - recoveredAt < 10_000) {
    recovered = await call('outage', 'pay', { ref: 'after-outage' });
    if (!recovered.isError) break;
    await sleep(100);
  }
  await sleep(1500);
  running = false;
  await Promise.all(workers);

  expect(duringSide.isError).toBe(true);
  expect(JSON.parse(duringSide.output)).toMatchObject({ error: true, tool: 'pay', kind: 'STORE_UNAVAILABLE', recoverable: true });
  expect(paid.get('during-outage')).toBeUndefined();
  expect(duringRead).toMatchObject({ isError: false, output: '{"balance":10}' });
  expect(recovered).toMatchObject({ isError: false, output: 'paid after-outage' });
  expect(Date.now() - recoveredAt).toBeLessThan(10_000);

  for (const [ref, count] of paid) expect([ref, count]).toEqual([ref, 1]);
  expect(lookErrors).toEqual([]);
  const kinds = new Set(outcomes.map((o) => o.kind));
  for (const kind of kinds) expect(['OK', 'REPLAY', 'IN_PROGRESS', 'STORE_UNAVAILABLE']).toContain(kind);
  expect(outcomes.filter((o) => o.phase === 'outage' && o.kind === 'STORE_UNAVAILABLE').length).toBeGreaterThan(0);
  expect(outcomes.filter((o) => o.phase === 'outage' && (o.kind === 'OK' || o.kind === 'REPLAY')).length).toBeLessThan(10);
  expect(outcomes.filter((o) => o.phase === 'after' && o.kind === 'REPLAY').length).toBeGreaterThan(0);

  const before = outcomes.find((o) => o.phase === 'before' && o.kind === 'OK')!;
  expect(await call('load', 'pay', { ref: before.ref })).toMatchObject({ isError: false, idempotentReplay: true, output: `paid ${before.ref}` });
  expect(paid.get(before.ref)).toBe(1);
});
