// Audit of dispatchctl's hard errors: every RPC error of dispatch carries a google.rpc.ErrorInfo
// whose reason tells what to do (LOOP_DETECTED: change the approach; OVERLOADED: try again), as
// the examples print it (`dispatch failed: ABORTED LOOP_DETECTED: ...`). dispatchctl printed the
// code and message alone (`ABORTED: loop detected ...`), so a script could not branch on the
// reason; it now follows the message: `... (reason LOOP_DETECTED)`.
import { dispatchctlAt } from '../helpers/dispatchctl';
import { startApp } from '../helpers/servers';
import { turnInFlight } from '../helpers/turn-in-flight';

let t: Awaited<ReturnType<typeof startApp>>;
const ctl = dispatchctlAt(() => t.address);
beforeAll(async () => {
  t = await startApp(`tools:
  - name: echo
    effect: read_only
    input_schema: '{"type":"object"}'
    builtin: { name: echo }
  - name: sleep
    effect: read_only
    input_schema: '{"type":"object"}'
    builtin: { name: sleep }
limits:
  max_turns_in_flight: 1
`);
});
afterAll(() => t.close());

test('a hard error is printed with its ErrorInfo reason: ABORTED ... (reason LOOP_DETECTED)', async () => {
  for (let i = 1; i <= 10; i++) expect((await ctl('--session', 'loopy', 'call', 'echo', '{"a":1}')).code).toBe(0);
  const run = await ctl('--session', 'loopy', 'call', 'echo', '{"a":1}');
  expect(run.code).toBe(1);
  expect(run.err).toBe('dispatchctl: ABORTED: loop detected: echo returned the same result the last 10 times it was called with the same input (reason LOOP_DETECTED)');
});

test('RESOURCE_EXHAUSTED OVERLOADED, told apart from the other reasons of its code', async () => {
  const holder = await turnInFlight(t, 'holder', 800);
  const run = await ctl('call', 'echo', '{}');
  expect(run.code).toBe(1);
  expect(run.err).toMatch(/^dispatchctl: RESOURCE_EXHAUSTED: .*nothing was run.* \(reason OVERLOADED\)$/);
  await holder.done;
});

test('a reason that only repeats the code is not printed twice', async () => {
  const run = await ctl('end-session', 'bad\u0007id');
  expect(run.code).toBe(1);
  expect(run.err).toMatch(/^dispatchctl: INVALID_ARGUMENT: session_id holds U\+0007 [^(]*$/);
});
