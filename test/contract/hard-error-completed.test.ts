import * as grpc from '@grpc/grpc-js';
import { DispatchMode } from '../../gen/dispatch/v1/dispatch_pb';
import { json, startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { failure } from './error-info';

// A Python agent author's probe: a turn [send_email, a call the loop check stops] ended ABORTED
// LOOP_DETECTED; the email had gone, but its result was lost with the RPC and the ErrorInfo named
// only the looping call, so the backend could not tell the model a side effect had run. The
// ErrorInfo now counts the calls that had ended and names them (calls_completed,
// completed_call_ids), sequential and parallel. Real HTTP tool, real gRPC trailer.

let tools: ToolServer;
let d: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  tools = await startToolServer({ '/send': json({ sent: true }) });
  d = await startApp(`tools:
  - { name: send_email, effect: side_effect, input_schema: '{"type":"object"}', http: { url: "${tools.url}/send" } }
  - { name: same, effect: read_only, loop: { warn_threshold: 2, stop_threshold: 3 }, builtin: { name: echo } }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const loops = (prefix: string) => ['1', '2', '3', '4'].map((n) => ({ id: `${prefix}${n}`, name: 'same', arguments: '{"q":1}' }));

test('sequential: LOOP_DETECTED names the email that was sent and the calls before', async () => {
  const calls = [{ id: 'mail', name: 'send_email', arguments: '{"to":"ana"}' }, ...loops('s')];
  const info = await failure(d.dispatch.dispatch({ sessionId: 'seq', calls }));
  expect(info).toMatchObject({ code: grpc.status.ABORTED, reason: 'LOOP_DETECTED' });
  expect(info.metadata).toMatchObject({ tool_call_id: 's4', calls_completed: '4', completed_call_ids: 'mail,s1,s2,s3' });
  expect(tools.count('/send')).toBe(1);
});

test('parallel: the calls of the waves that had ended', async () => {
  const info = await failure(d.dispatch.dispatch({ sessionId: 'par', mode: DispatchMode.PARALLEL, calls: loops('p') }));
  expect(info).toMatchObject({ reason: 'LOOP_DETECTED' });
  expect(info.metadata).toMatchObject({ calls_completed: '3', completed_call_ids: 'p1,p2,p3' });
});

test('a hard error at the first call: no such metadata', async () => {
  await d.dispatch.dispatch({ sessionId: 'first', calls: loops('f').slice(0, 3) });
  const info = await failure(d.dispatch.dispatch({ sessionId: 'first', calls: [{ id: 'g1', name: 'same', arguments: '{"q":1}' }] }));
  expect(info.reason).toBe('LOOP_DETECTED');
  expect(info.metadata).not.toHaveProperty('calls_completed');
});
