// CALL_RECEIVED describes a call's arguments by their shape (`dispatch.arguments.shape`). A key named
// `__proto__` (JSON.parse makes it an own key, and the tool receives it) was left out of the shape:
// the shape's object was a plain `{}`, and assigning `out["__proto__"]` set its prototype instead
// of adding a key. `{"__proto__":{"x":1},"b":2}` was described as `{"b":"number"}`. The real
// server on port 0; `weather` is the ordinary name the others must behave like.
import { EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp } from '../helpers/servers';
import { collectEvents } from '../security/support/event-stream';

const NAMES = ['weather', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];

let d: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  d = await startApp(`tools:\n  - { name: echo, effect: read_only, input_schema: '{"type":"object"}', builtin: { name: echo } }\n`);
});
afterAll(() => d.close());

test.each(NAMES)('the arguments shape of a call keeps a key named %s, at the top and nested', async (name) => {
  const session = `shape-${name}`;
  const events = collectEvents(d.dispatch, { sessionId: session });
  try {
    await events.ready();
    const args = `{"${name}": {"${name}": 1}, "b": "x"}`;
    const { results } = await d.dispatch.dispatch({ sessionId: session, calls: [{ id: 'c1', name: 'echo', arguments: args }] });
    expect(JSON.parse(results[0]!.output)).toEqual(JSON.parse(args));
    const received = (e: { kind: EventKind; toolCallId: string }) => e.kind === EventKind.CALL_RECEIVED && e.toolCallId === 'c1';
    expect(await events.waitFor(received)).toBe(true);
    const shape = events.events.find(received)!.attributes['dispatch.arguments.shape']!;
    expect(shape).toBe(`{"${name}":{"${name}":"number"},"b":"string"}`);
  } finally {
    events.cancel();
  }
});
