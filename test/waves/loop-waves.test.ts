import { status, type ServiceError } from '@grpc/grpc-js';
import { DispatchMode, ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { errorReason } from '../guards/helpers';
import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';
import { until } from '../helpers/until';
import { answerAfter } from './answer-after';

// Loop detection (DESIGN sections 6 and 11) sees every repeat of a call in one parallel turn as it
// does in sequential mode. Each attempt reads its operation's streak before it runs and records
// after, so identical calls of one wave all read the streak as it was before the wave: five
// identical calls with stop_threshold 2 all ran and answered OK, where sequential mode ends the
// RPC ABORTED LOOP_DETECTED. The planner now puts identical loop operations in successive waves.
// Through the real app and gRPC, against a real HTTP tool server that counts what it runs.

const closedEarly: string[] = [];
let tools: ToolServer;
let d: TestDispatch;

beforeAll(async () => {
  const same = () => '{"same":true}';
  tools = await startToolServer({ '/look': answerAfter(0, closedEarly, 200, same), '/broken': answerAfter(0, closedEarly, 400, same), '/hang': answerAfter(3000, closedEarly) });
  const tool = (name: string, extra: string) => `  - { name: ${name}, effect: read_only, concurrency_safe: true, http: { url: "${tools.url}/${name}" }, ${extra} }\n`;
  d = await startApp(
    'tools:\n' +
      tool('look', 'loop: { stop_threshold: 2 }') +
      tool('broken', 'retry: { max_attempts: 1 }, loop: { failure_block_threshold: 2 }') +
      tool('hang', 'timeout_ms: 10000'),
  );
});
afterAll(async () => {
  await d.close();
  await tools.close();
});
beforeEach(() => void (tools.received.length = 0));

let sessions = 0;
const turn = (mode: DispatchMode, name: string, count: number, signal?: AbortSignal) =>
  d.dispatch.dispatch(
    { sessionId: `loop-waves-${sessions++}`, mode, calls: Array.from({ length: count }, (_, i) => ({ id: `call-${i}`, name, arguments: '{"q":"same"}' })) },
    { signal },
  );

describe.each([
  ['SEQUENTIAL', DispatchMode.SEQUENTIAL],
  ['PARALLEL', DispatchMode.PARALLEL],
])('%s', (_name, mode) => {
  test('five identical calls with stop_threshold 2: the third stops the turn ABORTED LOOP_DETECTED', async () => {
    const error = await turn(mode, 'look', 5).then(
      () => undefined,
      (e: ServiceError) => e,
    );
    expect(error?.code).toBe(status.ABORTED);
    expect(error?.details).toBe('loop detected: look returned the same result the last 2 times it was called with the same input');
    expect(errorReason(error)).toBe('LOOP_DETECTED');
    // The loop stop comes before execution: the tool ran at most twice (the second may be memoized).
    expect(tools.count('/look')).toBeLessThanOrEqual(2);
  });

  test('four identical failing calls with failure_block_threshold 2: the third and fourth are refused LOOP_BLOCKED without running', async () => {
    const { results } = await turn(mode, 'broken', 4);
    expect(results.map((r) => [r.toolCallId, r.isError, r.error?.kind])).toEqual([
      ['call-0', true, ErrorKind.TOOL_ERROR],
      ['call-1', true, ErrorKind.TOOL_ERROR],
      ['call-2', true, ErrorKind.LOOP_BLOCKED],
      ['call-3', true, ErrorKind.LOOP_BLOCKED],
    ]);
    expect(tools.count('/broken')).toBe(2);
  });
});

test('PARALLEL: a client cancel while identical calls wait for the first ends the RPC CANCELLED; the waiting calls never start', async () => {
  closedEarly.length = 0;
  const controller = new AbortController();
  const started = Date.now();
  const pending = turn(DispatchMode.PARALLEL, 'hang', 3, controller.signal).then(
    () => undefined,
    (e: ServiceError) => e,
  );
  await until(() => tools.received.length === 1 || undefined, 'the first call at the tool server', 2000);
  controller.abort();
  const error = await pending;
  expect(error?.code).toBe(status.CANCELLED);
  // The running call's request is closed at the tool server, long before its 3 s answer.
  await until(() => closedEarly.length === 1 || undefined, 'its request closed', 2000);
  expect(Date.now() - started).toBeLessThan(2500);
  await new Promise((r) => setTimeout(r, 100));
  expect(tools.received.map((r) => r.body.tool_call_id)).toEqual(['call-0']);
});
