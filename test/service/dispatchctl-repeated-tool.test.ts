// `--tool` given twice: parseArgs kept the last one. `events --tool echo --tool shout` (written as
// `--kind`, which repeats, is written) tailed shout alone and dropped echo's events without a word,
// though Subscribe takes a list of tools; `approvals --tool a --tool b` listed b's alone. Now events
// subscribes to every tool named, and approvals, whose ListApprovals filters by one tool, refuses
// a second (2). The compiled CLI (`npm run build` first) and the real server on port 0.
import { dispatchctlAt, startDispatchctl } from '../helpers/dispatchctl';
import { startApp, type TestDispatch } from '../helpers/servers';
import { until } from '../helpers/until';

jest.setTimeout(30_000);

const TOOLS = `
tools:
  - name: echo
    effect: read_only
    builtin: { name: echo }
  - name: shout
    effect: read_only
    builtin: { name: echo }
  - name: whisper
    effect: read_only
    builtin: { name: echo }
`;

let d: TestDispatch;
beforeAll(async () => {
  d = await startApp(TOOLS);
});
afterAll(() => d.close());

let calls = 0;
const call = (name: string) => d.dispatch.dispatch({ sessionId: 'two', calls: [{ id: `${name}-${++calls}`, name, arguments: `{"n":${calls}}` }] });

test('events --tool echo --tool shout tails both tools, and no other', async () => {
  const run = startDispatchctl(['--address', d.address, '--session', 'two', 'events', '--tool', 'echo', '--tool', 'shout', '--kind', 'tool_post']);
  try {
    await until(async () => {
      await call('shout');
      return run.out() !== '' || undefined;
    }, 'the subscription live');
    await call('whisper');
    await call('echo');
    await call('shout');
    // Its own id: warm-up shouts may still be arriving (a loaded CI run counted two of them).
    const last = `shout-${calls}`;
    await until(() => (run.out().includes(` call=${last} `) ? true : undefined), 'the last shout');
    expect(run.out()).toContain(' tool=echo ');
    expect(run.out()).not.toContain('tool=whisper');
    run.child.kill('SIGINT');
    expect(await run.done).toMatchObject({ code: 0, err: '' });
  } finally {
    run.child.kill('SIGKILL');
  }
});

test('approvals with two --tool filters is a usage error', async () => {
  const run = await dispatchctlAt(() => d.address)('approvals', '--tool', 'echo', '--tool', 'shout');
  expect(run).toMatchObject({ code: 2, out: '' });
  expect(run.err.split('\n')[0]).toBe('dispatchctl: approvals lists the calls of one --tool, got 2 ("echo", "shout")');
});
