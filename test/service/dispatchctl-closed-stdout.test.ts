// dispatchctl whose reader goes away (`dispatchctl events | head -1`, `| grep -m1 ...`): the next
// line it wrote met EPIPE, an unhandled 'error' on stdout, and the process died with Node's stack
// trace on stderr and exit 1. It now stops as on Ctrl-C. The compiled CLI (`npm run build` first)
// against a real server on port 0.
import { startDispatchctl } from '../helpers/dispatchctl';
import { startApp, type TestDispatch } from '../helpers/servers';
import { until } from '../helpers/until';

jest.setTimeout(30_000);

const TOOLS = 'tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n';

let d: TestDispatch;
beforeAll(async () => {
  d = await startApp(TOOLS);
});
afterAll(() => d.close());

let calls = 0;
// Arguments differ from call to call: identical ones would end the turn LOOP_DETECTED.
const call = (id: string) => d.dispatch.dispatch({ sessionId: 'piped', calls: [{ id, name: 'echo', arguments: `{"n":${++calls}}` }] });

test('events whose stdout reader has gone ends quietly with 0, not with an EPIPE stack trace', async () => {
  const run = startDispatchctl(['--address', d.address, '--session', 'piped', 'events']);
  try {
    await until(async () => {
      await call('probe');
      return run.out().includes('call=probe') || undefined;
    }, 'the subscription live');
    // What `head -1` does once it has its line: closes its end of the pipe.
    run.child.stdout!.destroy();
    for (let i = 0; i < 5; i++) await call(`after-${i}`);
    const { code, err } = await run.done;
    expect({ code, err }).toEqual({ code: 0, err: '' });
  } finally {
    run.child.kill('SIGKILL');
  }
});
