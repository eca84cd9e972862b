import { status } from '@grpc/grpc-js';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';

// Loop detection compares what the tool answered, not the bounded output the model is shown
// (DESIGN 6: a different result is progress). A job poll whose answers differ only in the middle
// that bounding omits was warned from the 3rd call and ended LOOP_DETECTED at the 11th, after ten
// different answers. Answers equal whole are still repeats, and a replay of a bounded result still
// repeats its first. With the memory store and with Redis.

jest.setTimeout(30_000);

const yaml = (url: string) => `
tools:
  - name: poll
    effect: read_only
    skip_memoize: true
    input_schema: '{"type":"object"}'
    max_result_chars: 200
    http: { url: "${url}/poll" }
  - name: same
    effect: read_only
    input_schema: '{"type":"object"}'
    max_result_chars: 200
    skip_memoize: true
    http: { url: "${url}/same" }
`;

let tools: ToolServer;
let redis: TestRedis | undefined;
let polls = 0;
// Equal length, equal head and tail: only the omitted middle tells the answers apart.
const answer = (middle: string) => `{"head":"${'h'.repeat(300)}","progress":"${middle}","tail":"${'t'.repeat(300)}"}`;
beforeAll(async () => {
  tools = await startToolServer({
    '/poll': (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(answer(String(++polls).padStart(3, '0'))),
    '/same': (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(answer('000')),
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

  const call = (session: string, id: string, name: string) => d.dispatch.dispatch({ sessionId: session, calls: [{ id, name, arguments: '{"job":"build-42"}' }] });

  test('answers differing only in the omitted middle are progress: twelve polls, no warning, no stop', async () => {
    const session = `poll-${kind}`;
    const results = [];
    for (let i = 1; i <= 12; i++) results.push((await call(session, `p${i}`, 'poll')).results[0]!);
    expect(results.every((r) => r.truncated && !r.isError)).toBe(true);
    expect(new Set(results.map((r) => r.output)).size).toBe(1);
    expect(results.flatMap((r) => loopWarnings(r.warnings))).toEqual([]);
  });

  test('answers equal whole are still repeats: warned at the 3rd, stopped at the 11th', async () => {
    const session = `same-${kind}`;
    const results = [];
    for (let i = 1; i <= 10; i++) results.push((await call(session, `s${i}`, 'same')).results[0]!);
    expect(results.map((r) => loopWarnings(r.warnings).length)).toEqual([0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
    await expect(call(session, 's11', 'same')).rejects.toMatchObject({ code: status.ABORTED });
  });
});
