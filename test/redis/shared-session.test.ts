import { randomUUID } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { DEFAULT_TENANT } from '../../src/server';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';

/** Sessions are unique per run, so a reused REDIS_URL server holds nothing of an earlier run. */
const RUN = randomUUID().slice(0, 8);

jest.setTimeout(60_000);

type TestApp = Awaited<ReturnType<typeof startApp>>;

let redis: TestRedis;
let tools: ToolServer;
let a: TestApp;
let b: TestApp;
let sent = 0;

const TOOLS = (url: string) => `tools:
  - name: echo
    effect: read_only
    builtin: { name: echo }
  - name: report
    effect: read_only
    max_result_chars: 100
    input_schema: '{"type":"object"}'
    http: { url: "${url}/report" }
  - name: send
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${url}/send" }
`;

beforeAll(async () => {
  redis = await startRedis();
  tools = await startToolServer({
    '/report': (_req, res) => void res.writeHead(200).end(`${'line of the report\n'.repeat(200)}END`),
    '/send': (_req, res) => void res.writeHead(200).end(`sent #${++sent}`),
  });
  [a, b] = await Promise.all([0, 1].map(() => startApp(TOOLS(tools.url), { redisUrl: redis.url })));
});

afterAll(async () => {
  await a?.close();
  await b?.close();
  await tools?.close();
  await redis?.close();
});

const call = async (app: TestApp, sessionId: string, name: string, args: string): Promise<ToolResult> =>
  (await app.dispatch.dispatch({ sessionId, calls: [{ id: `c_${Math.random().toString(36).slice(2)}`, name, arguments: args }] })).results[0]!;

test('the loop window is shared: identical calls alternating between replicas warn at 3 and stop at 11', async () => {
  const results: ToolResult[] = [];
  for (let i = 0; i < 10; i++) results.push(await call(i % 2 === 0 ? a : b, `${RUN}-loop-1`, 'echo', '{"q":"same"}'));
  expect(results.map((r) => r.warnings.length > 0)).toEqual([false, false, true, true, true, true, true, true, true, true]);
  expect(results[2]!.warnings[0]).toContain('echo returned the same result the last 3 times it was called with the same input');
  await expect(call(b, `${RUN}-loop-1`, 'echo', '{"q":"same"}')).rejects.toMatchObject({ code: status.ABORTED });
  expect(await call(a, `${RUN}-loop-2`, 'echo', '{"q":"same"}')).toMatchObject({ isError: false, warnings: [] });
});

test('a result bounded on one replica is read whole through the other', async () => {
  const bounded = await call(a, `${RUN}-read-1`, 'report', '{}');
  expect(bounded.truncated).toBe(true);
  expect([...bounded.output].length).toBeLessThanOrEqual(100);
  const full = `${'line of the report\n'.repeat(200)}END`;
  const page = await b.dispatch.readResult({ resultHandle: bounded.resultHandle, offset: 0, limit: 65_536 });
  expect(page).toMatchObject({ text: full, totalChars: full.length, nextOffset: full.length });
});

test('EndSession on one replica clears records made through the other', async () => {
  const first = await call(a, `${RUN}-end-1`, 'send', '{"to":"x"}');
  expect(await call(b, `${RUN}-end-1`, 'send', '{"to":"x"}')).toMatchObject({ idempotentReplay: true, output: first.output });
  await b.dispatch.endSession({ sessionId: `${RUN}-end-1` });
  const again = await call(a, `${RUN}-end-1`, 'send', '{"to":"x"}');
  expect(again).toMatchObject({ isError: false, idempotentReplay: false });
  expect(again.output).not.toBe(first.output);
  expect(tools.count('/send')).toBe(2);
});

test('trajectory memory in Redis holds each field cut to 500 characters', async () => {
  const long = 'z'.repeat(2000);
  await call(a, `${RUN}-mem-1`, 'echo', JSON.stringify({ long }));
  const memory = await b.app.deps.store.memory({ tenant: DEFAULT_TENANT, sessionId: `${RUN}-mem-1` });
  expect(memory).toHaveLength(1);
  const [, input, result] = /^tool=echo; input=(.*); result=(.*)$/s.exec(memory[0]!)!;
  expect(input).toHaveLength(500);
  expect(result).toHaveLength(500);
});
