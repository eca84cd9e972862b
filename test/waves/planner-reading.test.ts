import { status, type ServiceError } from '@grpc/grpc-js';
import { DispatchMode } from '../../gen/dispatch/v1/dispatch_pb';
import { errorReason } from '../guards/helpers';
import { json, startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// A parallel turn's planner parses and canonicalises each call's arguments; the call's first
// attempt takes that reading instead of its own, but only for the arguments its pre-tool hooks
// left as they were. A policy that rewrites them keys the attempt (loop operation, memo and
// idempotency keys) by the arguments the tool receives, as in sequential mode. Through the real
// app and gRPC, with the builtin echo tool and a real HTTP tool server.

let d: TestDispatch;
let tools: ToolServer;

beforeAll(async () => {
  tools = await startToolServer({ '/send': json({ sent: true }) });
  d = await startApp(`
tools:
  - { name: echo, effect: read_only, concurrency_safe: true, input_schema: '{"type":"object"}', builtin: { name: echo }, loop: { stop_threshold: 2 } }
  - { name: send, effect: side_effect, concurrency_safe: true, input_schema: '{"type":"object"}', http: { url: "${tools.url}/send" } }
  - { name: send_tagged, effect: side_effect, concurrency_safe: true, input_schema: '{"type":"object"}', http: { url: "${tools.url}/send" } }
policies:
  - { match: [echo], decide: modify, set: { /q: fixed } }
  - { match: [send_tagged], decide: modify, set: { /channel: email } }
`);
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});

const turn = (sessionId: string, texts: readonly string[]) =>
  d.dispatch.dispatch({ sessionId, mode: DispatchMode.PARALLEL, calls: texts.map((q, i) => ({ id: `call-${i}`, name: 'echo', arguments: JSON.stringify({ q }) })) });

test('calls a policy rewrites onto one argument set are one loop operation: the next turn stops ABORTED LOOP_DETECTED', async () => {
  // Different as sent, so the planner puts them in one wave; each records the rewritten call.
  const first = await turn('planner-reading', ['a', 'b']);
  expect(first.results.map((r) => r.output)).toEqual(['{"q":"fixed"}', '{"q":"fixed"}']);
  const error = await turn('planner-reading', ['c', 'd']).then(
    () => undefined,
    (e: ServiceError) => e,
  );
  expect(error?.code).toBe(status.ABORTED);
  expect(errorReason(error)).toBe('LOOP_DETECTED');
});

test('a side-effecting call run in a parallel turn is replayed by the same call sent alone, its text written otherwise', async () => {
  const before = tools.count('/send');
  const first = await d.dispatch.dispatch({
    sessionId: 'planner-key',
    mode: DispatchMode.PARALLEL,
    calls: [
      { id: 'c1', name: 'send', arguments: '{"to":"a","n":1}' },
      { id: 'c2', name: 'send', arguments: '{"n":2,"to":"b"}' },
    ],
  });
  expect(first.results.map((r) => r.idempotentReplay)).toEqual([false, false]);
  const alone = (await d.dispatch.dispatch({ sessionId: 'planner-key', calls: [{ id: 'c3', name: 'send', arguments: ' { "to" : "b", "n" : 2 } ' }] })).results[0]!;
  expect(alone).toMatchObject({ isError: false, output: '{"sent":true}', idempotentReplay: true });
  expect(tools.count('/send') - before).toBe(2);
});

test('a side-effecting call a policy modified in a parallel turn is keyed as modified: the same call sent alone is replayed', async () => {
  const before = tools.count('/send');
  const first = await d.dispatch.dispatch({
    sessionId: 'planner-tagged',
    mode: DispatchMode.PARALLEL,
    calls: [
      { id: 't1', name: 'send_tagged', arguments: '{"to":"a"}' },
      { id: 't2', name: 'send_tagged', arguments: '{"to":"b"}' },
    ],
  });
  expect(first.results.map((r) => r.idempotentReplay)).toEqual([false, false]);
  const alone = (await d.dispatch.dispatch({ sessionId: 'planner-tagged', calls: [{ id: 't3', name: 'send_tagged', arguments: '{"to":"b"}' }] })).results[0]!;
  expect(alone).toMatchObject({ isError: false, output: '{"sent":true}', idempotentReplay: true });
  const sent = tools.received.slice(before);
  expect(sent.map((r) => r.body.arguments)).toEqual([
    { to: 'a', channel: 'email' },
    { to: 'b', channel: 'email' },
  ]);
});
