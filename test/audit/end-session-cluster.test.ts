import { status } from '@grpc/grpc-js';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-server';
import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';
import { answerAfter } from '../waves/answer-after';

// Issue 3 item 2 and DESIGN section 11: EndSession clears the session's idempotency records (completed
// and UNKNOWN), loop window and spilled results. On Redis Cluster this is tested on the store alone
// (the contract suite); here through two replicas of the whole app on a three-master cluster: the
// session ended on one replica, its calls made again on the other, and other sessions untouched.

jest.setTimeout(90_000);

let cluster: TestRedisCluster;
let tools: ToolServer;
let a: TestDispatch;
let b: TestDispatch;
let sent = 0;
const closedEarly: string[] = [];

const YAML = (url: string) => `
tools:
  - { name: send, effect: side_effect, http: { url: "${url}/send" } }
  - { name: slow_send, effect: side_effect, timeout_ms: 100, http: { url: "${url}/slow" } }
  - { name: report, effect: read_only, max_result_chars: 100, loop: { stop_threshold: 2 }, http: { url: "${url}/report" } }
policies:
  - { match: [slow_send], breaker: { consecutive_failures: 100000, min_calls: 100000 } }
`;

beforeAll(async () => {
  cluster = await startRedisCluster(3);
  tools = await startToolServer({
    '/send': (_req, res) => void res.writeHead(200).end(`sent #${++sent}`),
    '/slow': answerAfter(1_000, closedEarly),
    '/report': (_req, res) => void res.writeHead(200).end('r'.repeat(1_000)),
  });
  a = await startApp(YAML(tools.url), { redisUrl: cluster.url });
  b = await startApp(YAML(tools.url), { redisUrl: cluster.url });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await tools?.close();
  await cluster?.close();
});

const one = async (d: TestDispatch, sessionId: string, name: string, args = '{"to":"x"}') => (await d.dispatch.dispatch({ sessionId, calls: [{ id: `c${sent}-${Math.random()}`, name, arguments: args }] })).results[0]!;
const sessions = Array.from({ length: 12 }, (_, i) => `cluster-end-${i}`);

test('EndSession through one replica clears records, UNKNOWN records, loop window and spilled results made through the other, of that session only', async () => {
  // Twelve sessions: their hash tags fall in slots of every master.
  const first = new Map<string, string>();
  for (const s of sessions) first.set(s, (await one(a, s, 'send')).output);
  for (const s of sessions) expect((await one(a, s, 'slow_send')).error).toMatchObject({ kind: ErrorKind.TIMEOUT });
  const spilled = new Map<string, string>();
  for (const s of sessions) {
    const r = await one(a, s, 'report');
    expect(r.truncated).toBe(true);
    spilled.set(s, r.resultHandle);
    // Two identical results: a third identical call would stop the turn (stop_threshold 2).
    expect((await one(b, s, 'report')).isError).toBe(false);
  }
  const ended = sessions.filter((_, i) => i % 2 === 0);
  const kept = sessions.filter((_, i) => i % 2 === 1);
  for (const s of ended) await b.dispatch.endSession({ sessionId: s });
  const sentBefore = sent;
  for (const s of ended) {
    const again = await one(a, s, 'send');
    expect(again).toMatchObject({ isError: false, idempotentReplay: false });
    expect((await one(a, s, 'slow_send')).error?.kind).toBe(ErrorKind.TIMEOUT);
    await expect(a.dispatch.readResult({ resultHandle: spilled.get(s)! })).rejects.toMatchObject({ code: status.NOT_FOUND });
    expect((await one(a, s, 'report')).isError).toBe(false);
  }
  expect(sent).toBe(sentBefore + ended.length);
  for (const s of kept) {
    expect(await one(a, s, 'send')).toMatchObject({ idempotentReplay: true, output: first.get(s) });
    expect((await one(b, s, 'slow_send')).error?.kind).toBe(ErrorKind.OUTCOME_UNKNOWN);
    expect((await b.dispatch.readResult({ resultHandle: spilled.get(s)! })).totalChars).toBe(1_000);
    await expect(one(b, s, 'report')).rejects.toMatchObject({ code: status.ABORTED });
  }
  expect(sent).toBe(sentBefore + ended.length);
});
