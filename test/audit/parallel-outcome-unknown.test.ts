import { status, type ServiceError } from '@grpc/grpc-js';
import { DispatchMode, ErrorKind, type DispatchRequestSchema } from '../../gen/dispatch/v1/dispatch_pb';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';
import { answerAfter } from '../waves/answer-after';

// DESIGN section 5 and 11: a side-effecting call cut off while its tool ran (a timeout, or an abort
// by a sibling's hard error in a parallel wave) leaves its record UNKNOWN, so an identical re-call
// is answered OUTCOME_UNKNOWN without running. The existing tests check this in sequential mode
// and on one replica; here in parallel mode, on the memory store and on Redis with the re-call
// sent to another replica.

jest.setTimeout(30_000);

const closedEarly: string[] = [];
let tools: ToolServer;
let redis: TestRedis;
const apps: TestDispatch[] = [];

const yaml = (url: string) => `
tools:
  - { name: send, effect: side_effect, concurrency_safe: true, timeout_ms: 300, http: { url: "${url}/slow" } }
  - { name: post, effect: side_effect, concurrency_safe: true, http: { url: "${url}/slow" } }
  - { name: pause, effect: read_only, concurrency_safe: true, http: { url: "${url}/mid" } }
  - { name: loopy, effect: read_only, concurrency_safe: true, loop: { stop_threshold: 1 }, http: { url: "${url}/quick" } }
`;

beforeAll(async () => {
  tools = await startToolServer({ '/slow': answerAfter(3_000, closedEarly), '/mid': answerAfter(300, closedEarly), '/quick': answerAfter(10, closedEarly, 200, () => 'same') });
  redis = await startRedis({ own: true });
  apps.push(await startApp(yaml(tools.url)));
  apps.push(await startApp(yaml(tools.url), { redisUrl: redis.url }));
  apps.push(await startApp(yaml(tools.url), { redisUrl: redis.url }));
});
afterAll(async () => {
  for (const app of apps) await app.close();
  await tools?.close();
  await redis?.close();
});

type Request = MessageInitShape<typeof DispatchRequestSchema>;
const kinds = (results: { isError: boolean; error?: { kind: ErrorKind } }[]) => results.map((r) => (r.isError ? ErrorKind[r.error!.kind] : 'ok'));
const sentTimes = (tool: string, session: string) => tools.received.filter((r) => r.body.tool === tool && r.body.session_id === session).length;

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.each([
  ['memory store', 0, 0],
  ['redis store, re-call on another replica', 1, 2],
])('%s', (_name, first, second) => {
  const a = () => apps[first]!;
  const b = () => apps[second]!;
  const session = `pou-${first}-${second}`;

  test('parallel: two side-effecting calls that time out mid-flight are not recoverable, and their re-calls are OUTCOME_UNKNOWN without running', async () => {
    const turn = (prefix: string): Request => ({
      sessionId: `${session}-t`,
      mode: DispatchMode.PARALLEL,
      calls: [1, 2].map((n) => ({ id: `${prefix}${n}`, name: 'send', arguments: `{"to":"u${n}"}` })),
    });
    const first = await a().dispatch.dispatch(turn('x'));
    expect(kinds(first.results)).toEqual(['TIMEOUT', 'TIMEOUT']);
    expect(first.results.map((r) => r.error!.recoverable)).toEqual([false, false]);
    expect(sentTimes('send', `${session}-t`)).toBe(2);
    const again = await b().dispatch.dispatch(turn('y'));
    expect(kinds(again.results)).toEqual(['OUTCOME_UNKNOWN', 'OUTCOME_UNKNOWN']);
    expect(again.results.map((r) => r.toolCallId)).toEqual(['y1', 'y2']);
    expect(sentTimes('send', `${session}-t`)).toBe(2);
  });

  test("parallel: a side-effecting call aborted mid-flight by its wave sibling's hard error is OUTCOME_UNKNOWN when called again, never run twice", async () => {
    const s = `${session}-h`;
    await a().dispatch.dispatch({ sessionId: s, calls: [{ id: 'seed', name: 'loopy', arguments: '{"q":1}' }] });
    const error = await a()
      .dispatch.dispatch({
        sessionId: s,
        mode: DispatchMode.PARALLEL,
        maxConcurrency: 2,
        calls: [
          { id: 'p1', name: 'post', arguments: '{"to":"bob"}' },
          { id: 'w1', name: 'pause', arguments: '{}' },
          { id: 'again', name: 'loopy', arguments: '{"q":1}' },
        ],
      })
      .then(
        () => undefined,
        (e: ServiceError) => e,
      );
    expect(error?.code).toBe(status.ABORTED);
    await until(() => closedEarly.includes('p1'));
    expect(sentTimes('post', s)).toBe(1);
    // The aborted call's record is written as it unwinds, possibly after the RPC ended: IN_PROGRESS until then.
    let kind = 'IN_PROGRESS';
    for (let i = 0; kind === 'IN_PROGRESS' && i < 100; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 50));
      const { results } = await b().dispatch.dispatch({ sessionId: s, calls: [{ id: `r${i}`, name: 'post', arguments: '{"to":"bob"}' }] });
      kind = kinds(results)[0]!;
    }
    expect(kind).toBe('OUTCOME_UNKNOWN');
    expect(sentTimes('post', s)).toBe(1);
  });
});
