import { AlwaysOnSampler } from '@opentelemetry/sdk-trace-base';
import { EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import { createDispatchClient } from '../../src/client';
import { createEventBus, createEventObserver, EVENT_NAME_CHARS } from '../../src/events';
import type { SpanData } from '../../src/telemetry/otlp-span-encoding';
import { createSpanTracer } from '../../src/telemetry/span-tracer';
import { retainedHeap } from '../helpers/heap';
import { startApp, type TestDispatch } from '../helpers/servers';
import { ECHO_TOOL_YAML, tapEvents } from './event-tap';

// A model may call a tool by any name and id, as long as the message: events and spans carry
// them cut to EVENT_NAME_CHARS, and nothing keeps a made-up name past its call.

const MB = 1024 * 1024;
/** A made-up name of a million characters, different for each `i`. */
const madeUp = (i: number) => String(i).padStart(8, '0') + 'x'.repeat(1_000_000 - 8);
/** A long text as a failed assertion shows it: its length, head and tail. */
const brief = (text: string) => `${text.length} chars: ${text.slice(0, 30)}...${text.slice(-10)}`;
const cutOf = (text: string) => brief(`${text.slice(0, EVENT_NAME_CHARS)}...`);

let d: TestDispatch;
beforeAll(async () => {
  d = await startApp(ECHO_TOOL_YAML);
});
afterAll(() => d?.close());

test('events carry a made-up tool name cut to 256 characters, and a call id of 256 (the longest Dispatch takes) whole', async () => {
  const tap = await tapEvents(d.address, { sessionId: 'cut' });
  try {
    const id = 'c'.repeat(EVENT_NAME_CHARS);
    const { results } = await d.dispatch.dispatch({ sessionId: 'cut', turn: 1, calls: [{ id, name: madeUp(1), arguments: '{}' }] });
    expect(results[0]!.isError).toBe(true);
    await tap.waitFor((events) => events.some((e) => e.kind === EventKind.TURN_END));
    const received = tap.events.find((e) => e.kind === EventKind.CALL_RECEIVED)!;
    expect(brief(received.tool)).toBe(cutOf(madeUp(1)));
    expect(received.toolCallId).toBe(id);
    expect(brief(received.attributes['gen_ai.tool.name']!)).toBe(cutOf(madeUp(1)));
    expect(received.attributes['gen_ai.tool.call.id']).toBe(id);
    expect(received.name === `execute_tool ${received.tool}`).toBe(true);
  } finally {
    tap.close();
  }
});

test('made-up names are not kept: neither by span names nor by a subscriber that does not read', async () => {
  // One subscriber that sees every event and never reads, one that sees none of them: either
  // makes every call build its events and spans.
  const client = createDispatchClient(d.address);
  const stalled = client.subscribe({});
  stalled.on('error', () => undefined);
  await new Promise((resolve) => stalled.once('metadata', resolve));
  stalled.pause();
  const elsewhere = await tapEvents(d.address, { sessionId: 'nobody' });
  try {
    const before = retainedHeap();
    for (let i = 0; i < 30; i++) {
      const { results } = await d.dispatch.dispatch({ sessionId: 'kept', turn: i, calls: [{ id: `c${i}`, name: madeUp(i), arguments: '{}' }] });
      expect(results[0]!.isError).toBe(true);
    }
    // Before: the span names of the first 1,024 tools were kept whatever their length (a million
    // characters a turn), and the stalled subscriber held each name three times.
    expect((retainedHeap() - before) / MB).toBeLessThan(8);
  } finally {
    stalled.cancel();
    client.close();
    elsewhere.close();
  }
}, 60_000);

test('traced, spans carry a made-up name and id cut, and their names are not kept', () => {
  const ended: SpanData[] = [];
  const tracer = createSpanTracer({ sampler: new AlwaysOnSampler(), sink: { append: (span) => ended.push(span) } });
  const observer = createEventObserver({ bus: createEventBus(), tracer });
  const before = retainedHeap();
  for (let i = 0; i < 30; i++) {
    const turn = observer.turn({ tenant: '', sessionId: 's', turn: i, callCount: 1 });
    turn.call({ toolCallId: 'c'.repeat(100_000), tool: madeUp(i), arguments: '{}' }).end(undefined, 'UNKNOWN_TOOL');
    turn.end();
  }
  const call = ended.find((span) => span.name.startsWith('execute_tool'))!;
  expect(brief(call.name)).toBe(brief(`execute_tool ${madeUp(0).slice(0, EVENT_NAME_CHARS)}...`));
  expect(brief(String(call.attributes!['gen_ai.tool.name']))).toBe(cutOf(madeUp(0)));
  expect(brief(String(call.attributes!['gen_ai.tool.call.id']))).toBe(cutOf('c'.repeat(100_000)));
  ended.length = 0;
  expect((retainedHeap() - before) / MB).toBeLessThan(8);
});
