import { ErrorKind, type ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';

// dispatchd with its Redis behind a proxy that stops forwarding on the open connections without
// closing them (what a Redis host that vanished leaves: half-open connections), while new
// connections get through (Redis back at the same address): side-effecting calls fail closed, and
// the service recovers by itself within the default deadSocketMs (3 s) plus a reconnect, not the
// ~15 minutes the kernel would take to give up on the old connection. Real redis-server.

jest.setTimeout(60_000);

let redis: TestRedis;
let proxy: TcpProxy;
let tools: ToolServer;
let app: Awaited<ReturnType<typeof startApp>>;
const paid = new Map<string, number>();

beforeAll(async () => {
  redis = await startRedis({ own: true });
  proxy = await startTcpProxy(redis.port);
  tools = await startToolServer({
    '/pay': (req, res) => {
      const ref = String((req.body.arguments as { ref: string }).ref);
      paid.set(ref, (paid.get(ref) ?? 0) + 1);
      res.writeHead(200).end(`paid ${ref}`);
    },
  });
  app = await startApp(
    `tools:
  - name: pay
    effect: side_effect
    input_schema: '{"type":"object","properties":{"ref":{"type":"string"}},"required":["ref"]}'
    http: { url: "${tools.url}/pay" }
`,
    { redisUrl: `redis://127.0.0.1:${proxy.port}` },
  );
});

afterAll(async () => {
  await app?.close();
  await tools?.close();
  await proxy?.close();
  await redis?.close();
});

const pay = async (ref: string): Promise<ToolResult> =>
  (await app.dispatch.dispatch({ sessionId: 's', calls: [{ id: `c_${Math.random().toString(36).slice(2)}`, name: 'pay', arguments: JSON.stringify({ ref }) }] })).results[0]!;

test('side-effecting calls fail closed on a half-open store connection, and succeed again once it is dropped', async () => {
  expect(await pay('before')).toMatchObject({ isError: false, output: 'paid before' });
  proxy.freeze();
  const frozen = Date.now();
  const during = await pay('during');
  expect(during.isError).toBe(true);
  expect(during.error?.kind).toBe(ErrorKind.STORE_UNAVAILABLE);
  expect(paid.get('during')).toBeUndefined();

  let after: ToolResult | undefined;
  while (Date.now() - frozen < 15_000) {
    after = await pay('after');
    if (!after.isError) break;
    expect(after.error?.kind).toBe(ErrorKind.STORE_UNAVAILABLE);
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(after).toMatchObject({ isError: false, output: 'paid after' });
  expect(Date.now() - frozen).toBeLessThan(3_000 * 1.25 + 3_000);
  expect(paid.get('after')).toBe(1);
  expect(await pay('before')).toMatchObject({ isError: false, idempotentReplay: true, output: 'paid before' });
  expect(paid.get('before')).toBe(1);
});
