// The README: a `tools` filter keeps only the events whose tool it names, and TURN_END's is empty:
// "add the empty name "" to tools to receive it too". Subscribe does (event-filter.ts matches the
// tool against the set, "" included), but `dispatchctl events --tool T --tool ""` dropped the empty
// name before subscribing, so a turn's end never showed. It is now passed on. The compiled CLI
// (`npm run build` first) against the real server on port 0.
import { EventKind, SubscribeRequestSchema, EventSchema } from '../../gen/dispatch/v1/dispatch_pb';
import { create } from '@bufbuild/protobuf';
import { filterOf, matches, type EventFilter } from '../../src/events/event-filter';
import { startDispatchctl } from '../helpers/dispatchctl';
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
`;

let d: TestDispatch;
beforeAll(async () => {
  d = await startApp(TOOLS);
});
afterAll(() => d.close());

let n = 0;
const turn = (session: string, name: string) => d.dispatch.dispatch({ sessionId: session, turn: ++n, calls: [{ id: `${name}-${n}`, name, arguments: `{"n":${n}}` }] });

/** The kinds and tools of the event lines `out` holds (`KIND ... tool=T ...`). */
const shown = (out: string) =>
  out
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => `${line.split(' ')[1]} ${/ tool=(\S+)/.exec(line)?.[1] ?? '-'}`);

test('the server: a tools filter holding "" passes TURN_END (no tool) and not another tool\'s events', () => {
  const filter = filterOf(create(SubscribeRequestSchema, { tools: ['echo', ''] })) as EventFilter;
  expect(matches(filter, create(EventSchema, { kind: EventKind.TURN_END, tool: '' }))).toBe(true);
  expect(matches(filter, create(EventSchema, { kind: EventKind.TOOL_POST, tool: 'echo' }))).toBe(true);
  expect(matches(filter, create(EventSchema, { kind: EventKind.TOOL_POST, tool: 'shout' }))).toBe(false);
});

test('events --tool echo --tool "": echo\'s events and every turn\'s end, not shout\'s', async () => {
  const run = startDispatchctl(['--address', d.address, '--session', 'both', 'events', '--tool', 'echo', '--tool', '', '--kind', 'tool_post', '--kind', 'turn_end']);
  try {
    await until(async () => {
      await turn('both', 'echo');
      return run.out().includes('TOOL_POST') || undefined;
    }, 'the subscription live');
    // Each warm-up turn's TURN_END may still be on its way: the last turn's is awaited by its own.
    await turn('both', 'shout');
    await turn('both', 'echo');
    const last = n;
    await until(() => (run.out().includes(` turn=${last} `) && run.out().split('\n').some((l) => l.includes('TURN_END') && l.includes(` turn=${last} `)) ? true : undefined), 'the last turn\'s end');
    const lines = shown(run.out());
    expect(lines).toContain('TURN_END -');
    expect(lines).toContain('TOOL_POST echo');
    expect(lines).not.toContain('TOOL_POST shout');
    // shout's turn ended too: its TURN_END (no tool) passes, its TOOL_POST does not.
    expect(run.out()).toMatch(new RegExp(` TURN_END session=both turn=${last - 1} `));
    run.child.kill('SIGINT');
    expect(await run.done).toMatchObject({ code: 0, err: '' });
  } finally {
    run.child.kill('SIGKILL');
  }
});

test('events --tool "" alone: the events with no tool (TURN_END), none of a tool\'s', async () => {
  const run = startDispatchctl(['--address', d.address, '--session', 'none', 'events', '--tool', '']);
  try {
    await until(async () => {
      await turn('none', 'echo');
      return run.out().includes('TURN_END') || undefined;
    }, 'a turn\'s end');
    await turn('none', 'shout');
    const last = n;
    await until(() => (run.out().includes(` turn=${last} `) ? true : undefined), 'the last turn\'s end');
    const lines = shown(run.out());
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((line) => line === 'TURN_END -')).toBe(true);
    run.child.kill('SIGINT');
    expect(await run.done).toMatchObject({ code: 0, err: '' });
  } finally {
    run.child.kill('SIGKILL');
  }
});
