import { createServer, connect, type Server, type Socket } from 'node:net';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { until } from '../helpers/until';

// A read the memo cache answers takes no rate turn; when the entry goes stale while the store step
// answers (here another replica's write of its resource is announced during replica A's Redis
// round trip), the read is not served the old content and does not reach the tool without a turn:
// it takes its turn then and reads the new content. Two apps, one real Redis; A reaches Redis
// through a loopback proxy that can hold Redis's replies on A's command connections (not on its
// subscriber connections, so the announcement gets through).
// Each step waits for what it needs (a reply held, the entry's resource marked written on A), not
// for a time: the turn's interval (3 s) is far longer than the steps take on a loaded machine, and
// the read's arrival at the tool is bounded from its rate turn alone.

jest.setTimeout(30_000);

/**
 * A proxy to `port` whose `hold()` keeps the replies of every connection that never subscribed
 * until `release()`; `heldReplies()` counts those it keeps.
 */
async function startHoldingProxy(port: number) {
  const conns: { client: Socket; subscriber: boolean; held: Buffer[] }[] = [];
  let holding = false;
  const server: Server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    const conn = { client, subscriber: false, held: [] as Buffer[] };
    conns.push(conn);
    for (const s of [client, upstream]) s.on('error', () => undefined);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('data', (chunk: Buffer) => {
      // A SUBSCRIBE command itself (RESP: *N, then the command's name), not a script that names one (the ACL probe's).
      if (/^\*\d+\r\n\$\d+\r\n[ps]?subscribe\r\n/i.test(chunk.toString('latin1'))) conn.subscriber = true;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => (holding && !conn.subscriber ? conn.held.push(chunk) : client.write(chunk)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    hold: () => void (holding = true),
    heldReplies: () => conns.reduce((sum, conn) => sum + conn.held.length, 0),
    release() {
      holding = false;
      for (const conn of conns) for (const chunk of conn.held.splice(0)) conn.client.write(chunk);
    },
    close: () => new Promise<void>((resolve) => (conns.forEach((c) => c.client.destroy()), server.close(() => resolve()))),
  };
}

const files = new Map<string, string>();
const yaml = (url: string) => `
tools:
  - { name: read_file, effect: read_only, resource_key: /path, memoize_ttl_seconds: 60, retry: { max_attempts: 1 }, input_schema: '{"type":"object"}', http: { url: "${url}/read" } }
  - { name: write_file, effect: side_effect, resource_key: /path, input_schema: '{"type":"object"}', http: { url: "${url}/write" } }
policies:
  - match: read_file
    rate: { per_minute: 20, burst: 1, wait_ms: 5000 }
`;
/** The rate's interval: one turn every 3 s. */
const INTERVAL_MS = 3_000;

let redis: TestRedis;
let proxy: Awaited<ReturnType<typeof startHoldingProxy>>;
let tools: ToolServer;
let a: Awaited<ReturnType<typeof startApp>>;
let b: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  redis = await startRedis({ own: true });
  proxy = await startHoldingProxy(redis.port);
  tools = await startToolServer({
    '/read': (req, res) => void res.writeHead(200).end(files.get((req.body.arguments as { path: string }).path) ?? 'missing'),
    '/write': (req, res) => {
      const { path, text } = req.body.arguments as { path: string; text: string };
      files.set(path, text);
      res.writeHead(200).end('written');
    },
  });
  a = await startApp(yaml(tools.url), { redisUrl: `redis://127.0.0.1:${proxy.port}` });
  b = await startApp(yaml(tools.url), { redisUrl: redis.url });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await proxy?.close();
  await tools?.close();
  await redis?.close();
});

const read = () => a.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'r', name: 'read_file', arguments: '{"path":"/a"}' }] }).then((r) => r.results[0]!);

test('a memoized read whose resource another replica writes during its store step takes its rate turn and reads the write', async () => {
  files.set('/a', 'v1');
  // The first read's rate turn is taken after this (and its next turn INTERVAL_MS after that).
  const firstSent = Date.now();
  expect(await read()).toMatchObject({ output: 'v1', cached: false });
  const memo = a.app.deps.guards.memo!;
  // The resource the read's entry is indexed by (memoize: tenant, NUL, its resource_key's JSON).
  const resource = `default\u0000"/a"`;
  const generation = memo.generation(resource);
  proxy.hold();
  // A peeks its cache (v1: no rate turn) and sends its store step, whose answer is held.
  const pending = read();
  await until(() => proxy.heldReplies() > 0 || undefined, "A's store step answered, held");
  // B writes /a and announces it; A's subscriber hears it and evicts its entry.
  const written = await b.dispatch.dispatch({ sessionId: 's2', calls: [{ id: 'w', name: 'write_file', arguments: '{"path":"/a","text":"v2"}' }] });
  expect(written.results[0]!.isError).toBe(false);
  await until(() => memo.generation(resource) !== generation || undefined, 'A told of the write of /a');
  // Released well before the first read's turn interval is over: a read let through without a turn
  // would reach the tool now, before the next turn.
  const released = Date.now();
  expect(released - firstSent).toBeLessThan(INTERVAL_MS - 500);
  proxy.release();
  expect(await pending).toMatchObject({ output: 'v2', cached: false, isError: false });
  // It reached the tool at its rate turn, the interval after the first read's, not at once.
  const reads = tools.received.filter((r) => r.path === '/read');
  expect(reads).toHaveLength(2);
  process.stdout.write(`released ${released - firstSent} ms after the first read was sent; the second read reached the tool ${reads[1]!.start - firstSent} ms after\n`);
  // (10 ms for the clocks: the turns' is performance.now, rounded by the timers.)
  expect(reads[1]!.start - firstSent).toBeGreaterThanOrEqual(INTERVAL_MS - 10);
});
