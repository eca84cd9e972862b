import { EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import { formatEvent } from '../../src/events/format-event';
import { startApp, type TestDispatch } from '../helpers/servers';
import { tapEvents } from './event-tap';

// Found by writing a client from the proto alone: a call refused before any attempt (an unknown
// tool, arguments that do not fit the schema) showed subscribers a bare CALL_RECEIVED and nothing
// else, and TURN_END said outcome ok: the failures a dashboard most needs to see (the README's
// most common production failure) were invisible in the stream.

const TOOLS = `
tools:
  - name: echo
    effect: read_only
    input_schema: '{"type":"object"}'
    builtin: { name: echo }
  - name: sleep_for
    effect: read_only
    input_schema: '{"type":"object","properties":{"ms":{"type":"integer","minimum":0}},"required":["ms"],"additionalProperties":false}'
    builtin: { name: sleep }
`;

let d: TestDispatch;
beforeAll(async () => {
  d = await startApp(TOOLS);
});
afterAll(() => d?.close());

test('a call refused before any attempt ends with CALL_REFUSED, its kind and message; a call that ran has no CALL_REFUSED', async () => {
  const tap = await tapEvents(d.address, { sessionId: 'refused' });
  try {
    const calls = [
      { id: 'ok', name: 'echo', arguments: '{"a":1}' },
      { id: 'unknown', name: 'ecko', arguments: '{}' },
      { id: 'invalid', name: 'sleep_for', arguments: '{"ms":-5,"password":"hunter22"}' },
    ];
    const { results } = await d.dispatch.dispatch({ sessionId: 'refused', turn: 1, calls });
    expect(results.map((r) => [r.isError, r.attempts])).toEqual([[false, 1], [true, 0], [true, 0]]);
    await tap.waitFor((events) => events.some((e) => e.kind === EventKind.TURN_END));
    const sequence = tap.events.map((e) => `${EventKind[e.kind]}:${e.toolCallId}`);
    expect(sequence).toEqual(['CALL_RECEIVED:ok', 'TOOL_PRE:ok', 'TOOL_POST:ok', 'CALL_RECEIVED:unknown', 'CALL_REFUSED:unknown', 'CALL_RECEIVED:invalid', 'CALL_REFUSED:invalid', 'TURN_END:']);
    const [unknown, invalid] = tap.events.filter((e) => e.kind === EventKind.CALL_REFUSED);
    expect(unknown!.tool).toBe('ecko');
    expect(unknown!.attributes).toMatchObject({ 'dispatch.outcome': 'UNKNOWN_TOOL', 'error.type': 'UNKNOWN_TOOL', 'dispatch.attempts': '0', 'gen_ai.tool.call.id': 'unknown' });
    expect(unknown!.attributes['dispatch.message']).toContain('ecko');
    expect(invalid!.attributes).toMatchObject({ 'dispatch.outcome': 'INVALID_ARGUMENTS', 'error.type': 'INVALID_ARGUMENTS' });
    // Its message quotes argument values, which events carry only with debug_payloads (below).
    expect(invalid!.attributes['dispatch.message']).toBeUndefined();
    // Its span is the call's: the one CALL_RECEIVED opened, ended.
    const received = tap.events.find((e) => e.kind === EventKind.CALL_RECEIVED && e.toolCallId === 'invalid')!;
    expect(invalid!.spanId).toBe(received.spanId);
    expect(invalid!.endTime).toBeDefined();
    expect(formatEvent(invalid!)).toMatch(/CALL_REFUSED session=refused turn=1 call=invalid tool=sleep_for outcome=INVALID_ARGUMENTS$/);
  } finally {
    tap.close();
  }
});

test('with debug_payloads, an INVALID_ARGUMENTS message is carried, secrets redacted; a CALL_REFUSED filter gets those alone', async () => {
  const debug = await startApp(`${TOOLS}\ntelemetry: { debug_payloads: true }\n`);
  const tap = await tapEvents(debug.address, { sessionId: 'only', kinds: [EventKind.CALL_REFUSED] });
  try {
    const secret = 'sk-proj-' + 'A1b2C3d4E5f6G7h8'.repeat(3);
    const { results } = await debug.dispatch.dispatch({ sessionId: 'only', turn: 1, calls: [{ id: 'a', name: 'echo', arguments: '{}' }, { id: 'b', name: 'sleep_for', arguments: JSON.stringify({ ms: secret }) }] });
    // The model's own message quotes what it sent.
    expect(results[1]!.error?.message).toContain(secret);
    await tap.waitFor((events) => events.length >= 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(tap.events.map((e) => [EventKind[e.kind], e.toolCallId])).toEqual([['CALL_REFUSED', 'b']]);
    const message = tap.events[0]!.attributes['dispatch.message']!;
    expect(message).toContain('/ms');
    expect(message).not.toContain(secret);
  } finally {
    tap.close();
    await debug.close();
  }
});
