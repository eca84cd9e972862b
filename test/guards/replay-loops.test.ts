import { status } from '@grpc/grpc-js';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { json, startApp, startToolServer, type ToolServer } from '../helpers/servers';

// Replays count in the loop window (DESIGN 6: memoized results count; so do replays): a model
// that re-sends the same side-effecting call gets its stored result back each time, and without
// this would do so forever, never warned nor stopped. With the memory store and with Redis.

jest.setTimeout(30_000);

const yaml = (url: string) => `
tools:
  - name: send
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${url}/send" }
  - name: report
    effect: side_effect
    max_result_chars: 100
    input_schema: '{"type":"object"}'
    http: { url: "${url}/report" }
  - name: refuse
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${url}/refuse" }
`;

let tools: ToolServer;
let redis: TestRedis | undefined;
beforeAll(async () => {
  tools = await startToolServer({
    '/send': (_req, res) => void res.writeHead(200).end('sent'),
    '/report': (_req, res) => void res.writeHead(200).end('r'.repeat(500)),
    '/refuse': json({ error: 'no such recipient' }, 0, 400),
  });
});
afterAll(async () => {
  await tools.close();
  await redis?.close();
});

const loopWarnings = (warnings: readonly string[]) => warnings.filter((w) => w.startsWith('loop warning'));

describe.each(['memory', 'redis'])('with the %s store', (kind) => {
  let d: Awaited<ReturnType<typeof startApp>>;
  beforeAll(async () => {
    if (kind === 'redis') redis = await startRedis();
    d = await startApp(yaml(tools.url), kind === 'redis' ? { redisUrl: redis!.url } : {});
  });
  afterAll(() => d.close());

  const send = (session: string, id: string, name = 'send') => d.dispatch.dispatch({ sessionId: session, calls: [{ id, name, arguments: '{"to":"a@b.c"}' }] });

  test('the third identical call, a replay, carries the loop warning; the eleventh ends the RPC LOOP_DETECTED; the tool ran once', async () => {
    const session = `replays-${kind}`;
    const before = tools.count('/send');
    const results = [];
    for (let i = 1; i <= 10; i++) results.push((await send(session, `c${i}`)).results[0]!);
    expect(results.every((r) => r.output === 'sent' && !r.isError)).toBe(true);
    expect(results.slice(1).every((r) => r.idempotentReplay)).toBe(true);
    expect(results.map((r) => loopWarnings(r.warnings).length)).toEqual([0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
    expect(loopWarnings(results[2]!.warnings)).toEqual(['loop warning: send returned the same result the last 3 times it was called with the same input; use the result you have or change the approach (at 10 such results, the next identical call ends the turn)']);
    await expect(send(session, 'c11')).rejects.toMatchObject({ code: status.ABORTED, details: 'loop detected: send returned the same result the last 10 times it was called with the same input' });
    expect(tools.count('/send') - before).toBe(1);
  });

  test('replays of a stored failure count as the same failure: warned at the 2nd, refused LOOP_BLOCKED at the 6th', async () => {
    const session = `failures-${kind}`;
    const results = [];
    for (let i = 1; i <= 6; i++) results.push((await send(session, `f${i}`, 'refuse')).results[0]!);
    expect(results.slice(0, 5).every((r) => r.error?.kind === ErrorKind.TOOL_ERROR)).toBe(true);
    expect(results.slice(1, 5).every((r) => r.idempotentReplay)).toBe(true);
    expect(loopWarnings(results[1]!.warnings)).toEqual(['loop warning: this call has failed the same way 2 times in a row; change the arguments or the approach']);
    expect(results[5]!.error?.kind).toBe(ErrorKind.LOOP_BLOCKED);
    expect(tools.count('/refuse')).toBeGreaterThanOrEqual(1);
  });

  test('replays of a bounded result are repeats from the first: warned at the 3rd call, stopped at the 11th', async () => {
    const session = `bounded-${kind}`;
    const results = [];
    for (let i = 1; i <= 10; i++) results.push((await send(session, `r${i}`, 'report')).results[0]!);
    expect(results.every((r) => r.truncated)).toBe(true);
    expect(results.map((r) => loopWarnings(r.warnings).length)).toEqual([0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
    await expect(send(session, 'r11', 'report')).rejects.toMatchObject({ code: status.ABORTED });
  });

  test('replays in another session are counted there, not here', async () => {
    await send(`a-${kind}`, 'x1');
    const other = (await send(`b-${kind}`, 'y1')).results[0]!;
    expect(other.idempotentReplay).toBe(false);
    expect(loopWarnings(other.warnings)).toEqual([]);
  });
});
