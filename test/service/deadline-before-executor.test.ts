import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { retryTreeReflector, defaultGuards, type Guards } from '../../src/pipeline';
import { startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// The request's deadline passes after the pre-tool hooks and the claim, before the executor is
// started, without the event loop reaching its timers in between (here a pre-hook that holds the
// loop past the deadline; in production a loaded loop, or a store answer read in the same turn as
// the deadline). The executor used to be started all the same with a 1 ms timeout: an HTTP
// request written at once on a kept-alive connection, or a built-in that reports no delivery, was
// then cut by the deadline phase `during`, and the side-effecting call's key was recorded
// OUTCOME_UNKNOWN for the record's lifetime. Nothing may start past the deadline: the claim is
// released, the RPC ends DEADLINE_EXCEEDED, and the same call runs afterwards.

jest.setTimeout(30_000);

const DEADLINE_MS = 300;
let holdLoopMs = 0;
let charges = 0;
const guards: Guards = {
  ...defaultGuards(retryTreeReflector),
  preHook: () => {
    const until = Date.now() + holdLoopMs;
    while (Date.now() < until) {
      // Holds the event loop: no timer, the deadline's included, fires meanwhile.
    }
    return { action: 'allow' };
  },
};
const charge = async () => {
  charges++;
  await new Promise((r) => setTimeout(r, 20));
  return 'charged';
};

let tools: ToolServer;
let d: TestDispatch;
beforeAll(async () => {
  tools = await startToolServer({ '/pay': (_req, res) => void res.writeHead(200).end('paid') });
  d = await startDispatch(
    `tools:
  - name: pay
    effect: side_effect
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/pay" }
  - name: charge
    effect: side_effect
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    builtin: { name: charge }
`,
    { guards, builtins: new Map([['charge', charge]]) },
  );
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const call = (session: string, name: string, args: string, deadlineMs?: number) =>
  d.dispatch.dispatch({ sessionId: session, calls: [{ id: 'c', name, arguments: args }] }, deadlineMs === undefined ? undefined : { deadlineMs });

/** A call whose deadline passes while its pre-hook holds the loop: DEADLINE_EXCEEDED. */
async function pastDeadline(session: string, name: string, args: string): Promise<void> {
  holdLoopMs = DEADLINE_MS + 100;
  try {
    const error = await call(session, name, args, DEADLINE_MS).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(String(error)).toMatch(/DEADLINE_EXCEEDED|deadline/i);
  } finally {
    holdLoopMs = 0;
  }
  // The release (or the unknown record) lands as the attempt ends.
  await new Promise((r) => setTimeout(r, 200));
}

test('an HTTP call whose deadline passed before its executor started is not sent, and its claim is released', async () => {
  // A first call leaves a kept-alive connection to the tool: a request would be written on it at once.
  expect((await call('past-deadline-http', 'pay', '{"ref":"warm"}')).results[0]!.isError).toBe(false);
  expect(tools.count('/pay')).toBe(1);
  await pastDeadline('past-deadline-http', 'pay', '{"ref":"r-1"}');
  expect(tools.count('/pay')).toBe(1);
  const again = (await call('past-deadline-http', 'pay', '{"ref":"r-1"}')).results[0]!;
  expect(again.error?.kind ?? ErrorKind.UNSPECIFIED).toBe(ErrorKind.UNSPECIFIED);
  expect(again).toMatchObject({ isError: false, output: 'paid', idempotentReplay: false });
  expect(tools.count('/pay')).toBe(2);
});

test('a built-in (no delivery reported) whose deadline passed before it started is not run, and its claim is released', async () => {
  await pastDeadline('past-deadline-builtin', 'charge', '{"ref":"r-1"}');
  expect(charges).toBe(0);
  const again = (await call('past-deadline-builtin', 'charge', '{"ref":"r-1"}')).results[0]!;
  expect(again.error?.kind ?? ErrorKind.UNSPECIFIED).toBe(ErrorKind.UNSPECIFIED);
  expect(again).toMatchObject({ isError: false, output: 'charged', idempotentReplay: false });
  expect(charges).toBe(1);
});
