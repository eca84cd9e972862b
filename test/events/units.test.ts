import type { CallSummary } from '../../src/events';
import { LeanTurn } from '../../src/events/lean-observer';
import { eventBytes } from '../../src/events/event-bounds';
import { MAX_SHOWN_CHARS } from '../../src/events/format-event';
import { terminalText, terminalWord } from '../../src/events/terminal-text';
import type { ObserverEnv } from '../../src/events/observer-env';
import { create } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { EventKind, EventSchema, SubscribeRequestSchema, type Event } from '../../gen/dispatch/v1/dispatch_pb';
import { ATTR, createEventBus, createRingBuffer, DEFAULT_SUBSCRIBER_BUFFER_BYTES, EVENT_TEXT_CHARS, subscriberBufferBytesFor, decodeBatch, SYSTEM_TENANT, encodeBatch, filterOf, formatEvent, formatTraceparent, matches, newSpanId, newTraceId, parseTraceparent, timestampOf, type EventFilter } from '../../src/events';

test('a ring buffer keeps the newest items in order and counts every item it dropped', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 8 }), fc.array(fc.oneof(fc.constant('shift' as const), fc.integer())), (capacity, ops) => {
      const buffer = createRingBuffer<number>(capacity);
      const model: number[] = [];
      let modelDropped = 0;
      let pushed = 0;
      let out = 0;
      let dropped = 0;
      for (const op of ops) {
        if (op === 'shift') {
          const item = buffer.shift();
          expect(item).toBe(model.shift());
          if (item !== undefined) out++;
          dropped += buffer.takeDropped();
        } else {
          pushed++;
          buffer.push(op);
          model.push(op);
          if (model.length > capacity) {
            model.shift();
            modelDropped++;
          }
        }
        expect(buffer.size).toBe(model.length);
        expect(buffer.size).toBeLessThanOrEqual(capacity);
      }
      expect(out + dropped + buffer.takeDropped() + buffer.size).toBe(pushed);
      expect(modelDropped).toBe(pushed - out - buffer.size);
    }),
  );
  expect(() => createRingBuffer(0)).toThrow('ring buffer capacity must be a positive integer, got 0');
});

test('a ring buffer counts before each item what was lost before it: items it dropped, and losses reported before the item was pushed', () => {
  type Op = { push: number } | 'shift' | { lost: number };
  const op = fc.oneof(fc.record({ push: fc.integer() }), fc.constant('shift' as const), fc.record({ lost: fc.integer({ min: 1, max: 5 }) }));
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 6 }), fc.array(op as fc.Arbitrary<Op>), (capacity, ops) => {
      const buffer = createRingBuffer<number>(capacity);
      const model: { value: number; lostBefore: number }[] = [];
      let droppedSinceShift = 0;
      let lostSincePush = 0;
      for (const o of ops) {
        if (o === 'shift') {
          const item = model.shift();
          expect(buffer.shift()).toBe(item?.value);
          if (item) {
            expect(buffer.takeDropped()).toBe(droppedSinceShift + item.lostBefore);
            droppedSinceShift = 0;
          }
        } else if ('lost' in o) {
          buffer.addLost(o.lost);
          lostSincePush += o.lost;
        } else {
          buffer.push(o.push);
          if (model.length === capacity) droppedSinceShift += 1 + model.shift()!.lostBefore;
          model.push({ value: o.push, lostBefore: lostSincePush });
          lostSincePush = 0;
        }
        expect(buffer.size).toBe(model.length);
      }
    }),
  );
});

test('a ring buffer with a weight bound drops its oldest until the newest fits, keeps the newest whatever its weight, and counts what it dropped', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 20 }), fc.array(fc.oneof(fc.constant('shift' as const), fc.integer({ min: 0, max: 25 }))), (capacity, maxWeight, ops) => {
      const buffer = createRingBuffer<number>(capacity, maxWeight);
      const model: number[] = [];
      let modelDropped = 0;
      const held = () => model.reduce((a, b) => a + b, 0);
      for (const op of ops) {
        if (op === 'shift') {
          expect(buffer.shift()).toBe(model.shift());
        } else {
          buffer.push(op, op);
          if (model.length === capacity) (model.shift(), modelDropped++);
          while (model.length > 0 && held() + op > maxWeight) (model.shift(), modelDropped++);
          model.push(op);
        }
        expect(buffer.size).toBe(model.length);
        expect(buffer.weight).toBe(held());
        expect(buffer.weight <= maxWeight || buffer.size === 1).toBe(true);
      }
      expect(buffer.takeDropped()).toBe(modelDropped);
    }),
  );
  expect(() => createRingBuffer(4, 0)).toThrow('ring buffer weight bound must be a positive integer, got 0');
});

test('a subscriber buffers events up to subscriberBufferBytes (1 MiB by default); the next event it reads counts those dropped', () => {
  const hooks = { wake: () => undefined, closed: () => undefined };
  // CALL_RECEIVED with debug_payloads: arguments of 8,000 characters.
  const big = (i: number) => create(EventSchema, { kind: EventKind.CALL_RECEIVED, sessionId: 's', tool: 't', toolCallId: `c${i}`, attributes: { [ATTR.argumentsText]: 'a'.repeat(EVENT_TEXT_CHARS) } });
  const drain = (sub: { next(): Event | undefined }) => {
    const out: Event[] = [];
    for (let e = sub.next(); e; e = sub.next()) out.push(e);
    return out;
  };
  const small = createEventBus({ subscriberBufferBytes: 20_000 });
  const sub = small.subscribe('A', { sessionId: '' }, hooks)!;
  for (let i = 0; i < 10; i++) small.publish('A', big(i));
  expect(drain(sub).map((e) => `${e.toolCallId}(${e.dropped})`)).toEqual(['c8(8)', 'c9(0)']);
  small.close();

  const bus = createEventBus();
  const all = bus.subscribe('A', { sessionId: '' }, hooks)!;
  for (let i = 0; i < 1024; i++) bus.publish('A', big(i));
  const kept = drain(all);
  expect(kept.length).toBe(Math.floor(DEFAULT_SUBSCRIBER_BUFFER_BYTES / eventBytes(big(1000))));
  expect(kept.length).toBeGreaterThan(100);
  expect(Number(kept[0]!.dropped) + kept.length).toBe(1024);
  bus.close();
  expect(() => createEventBus({ subscriberBufferBytes: -1 })).toThrow('subscriberBufferBytes must be a positive integer, got -1');
});

test('a larger subscriber_buffer raises the byte bound with it: 10,000 ordinary events are all kept, huge ones still bounded', () => {
  const hooks = { wake: () => undefined, closed: () => undefined };
  const drain = (sub: { next(): Event | undefined }) => {
    const out: Event[] = [];
    for (let e = sub.next(); e; e = sub.next()) out.push(e);
    return out;
  };
  // A TOOL_POST as the pipeline publishes it, about 500 bytes.
  const ordinary = (i: number) =>
    create(EventSchema, { kind: EventKind.TOOL_POST, sessionId: 'session-0123456789', tool: 'get_weather', toolCallId: `call_${i}`.padEnd(40, 'x'), traceId: newTraceId(), spanId: newSpanId(), parentSpanId: newSpanId(), name: 'execute_tool get_weather', attributes: { [ATTR.attempt]: '1', [ATTR.outcome]: 'ok', [ATTR.durationMs]: '12', [ATTR.outputChars]: '1234', 'gen_ai.tool.name': 'get_weather', 'gen_ai.operation.name': 'execute_tool', 'dispatch.tenant': 'team-a'.padEnd(60, '-') } });
  expect(eventBytes(ordinary(1))).toBeGreaterThanOrEqual(450);
  expect(eventBytes(ordinary(1))).toBeLessThanOrEqual(550);
  const bus = createEventBus({ subscriberBuffer: 10_000 });
  const sub = bus.subscribe('A', { sessionId: '' }, hooks)!;
  for (let i = 0; i < 10_000; i++) bus.publish('A', ordinary(i));
  const kept = drain(sub);
  expect(kept.length).toBe(10_000);
  expect(kept[0]!.dropped).toBe(0n);

  const big = (i: number) => create(EventSchema, { kind: EventKind.CALL_RECEIVED, sessionId: 's', tool: 't', toolCallId: `c${i}`, attributes: { [ATTR.argumentsText]: 'a'.repeat(EVENT_TEXT_CHARS) } });
  for (let i = 0; i < 10_000; i++) bus.publish('A', big(i));
  const bounded = drain(sub);
  expect(subscriberBufferBytesFor(10_000)).toBe(10_000 * 1024);
  expect(bounded.length).toBe(Math.floor(subscriberBufferBytesFor(10_000) / eventBytes(big(9_999))));
  expect(bounded.length).toBeLessThan(1_300);
  bus.close();
  // Small counts keep the 1 MiB floor.
  expect(subscriberBufferBytesFor(16)).toBe(DEFAULT_SUBSCRIBER_BUFFER_BYTES);
  expect(subscriberBufferBytesFor(1024)).toBe(DEFAULT_SUBSCRIBER_BUFFER_BYTES);
});

test('a loss reported after events were buffered lands on the next event published, not on the oldest buffered one', () => {
  const bus = createEventBus({ subscriberBuffer: 4 });
  const hooks = { wake: () => undefined, closed: () => undefined };
  const sub = bus.subscribe('A', { sessionId: '' }, hooks)!;
  const ev = (id: string) => create(EventSchema, { kind: EventKind.TOOL_PRE, sessionId: 's', tool: 't', toolCallId: id });
  const drain = () => {
    const out: string[] = [];
    for (let e = sub.next(); e; e = sub.next()) out.push(`${e.toolCallId}(${e.dropped})`);
    return out;
  };
  bus.publish('A', ev('e1'));
  bus.publish('A', ev('e2'));
  bus.reportLost('A', { sessionId: 's', tool: 't', kind: EventKind.TOOL_PRE, count: 3 });
  bus.publish('A', ev('e3'));
  expect(drain()).toEqual(['e1(0)', 'e2(0)', 'e3(3)']);
  // Overflow drops still count before the oldest event kept; a loss carried by a dropped event
  // goes on to the next one delivered.
  for (const id of ['f1', 'f2']) bus.publish('A', ev(id));
  bus.reportLost('A', { sessionId: 's', tool: 't', kind: EventKind.TOOL_PRE, count: 2 });
  for (const id of ['f3', 'f4', 'f5', 'f6', 'f7']) bus.publish('A', ev(id));
  // f1, f2 and f3 (with the 2 lost before it) were dropped: 5 before f4.
  expect(drain()).toEqual(['f4(5)', 'f5(0)', 'f6(0)', 'f7(0)']);
  // A loss with nothing published after it waits for the next event.
  bus.reportLost('A', { sessionId: 's', tool: 't', kind: EventKind.TOOL_PRE, count: 1 });
  expect(drain()).toEqual([]);
  bus.publish('A', ev('g1'));
  expect(drain()).toEqual(['g1(1)']);
  bus.close();
});

test("a closing bus tells each subscriber while its buffer still holds what it has not read (a shutdown's last events)", () => {
  // Before, close cleared the buffer first: a loaded CI run lost a cancelled turn's last events.
  const bus = createEventBus();
  const read: string[] = [];
  const sub = bus.subscribe('A', { sessionId: '' }, {
    wake: () => undefined,
    closed: () => {
      for (let e = sub.next(); e; e = sub.next()) read.push(e.toolCallId);
    },
  })!;
  for (const id of ['c1', 'c2']) bus.publish('A', create(EventSchema, { kind: EventKind.TOOL_POST, sessionId: 's', tool: 't', toolCallId: id }));
  bus.close();
  expect(read).toEqual(['c1', 'c2']);
  expect(bus.subscriberCount).toBe(0);
});

test('traceparent: parsed when valid, refused when malformed, formatted back', () => {
  const header = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  const parsed = parseTraceparent(header);
  expect(parsed).toEqual({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', flags: '01' });
  expect(formatTraceparent(parsed!)).toBe(header);
  expect(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future')).toMatchObject({ flags: '01' });
  // Only the sampled flag is kept: the others are reserved, and must be zero when passed on.
  expect(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-ff')).toEqual({ ...parsed, flags: '01' });
  expect(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-08')).toEqual({ ...parsed, flags: '00' });
  expect(parseTraceparent(' 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\t')).toEqual(parsed);
  // W3C Trace Context: hex is lowercase; a header in uppercase is invalid, and ignored.
  expect(parseTraceparent(header.toUpperCase())).toBeUndefined();
  expect(parseTraceparent('00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01')).toBeUndefined();
  expect(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01')).toBeUndefined();
  expect(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0A')).toBeUndefined();
  expect(parseTraceparent('CC-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toBeUndefined();
  for (const bad of [undefined, '', 'garbage', 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', '00-00000000000000000000000000000000-00f067aa0ba902b7-01', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra']) {
    expect(parseTraceparent(bad)).toBeUndefined();
  }
  const ids = new Set(Array.from({ length: 2000 }, () => newSpanId()));
  expect(ids.size).toBe(2000);
  expect([...ids].every((id) => /^[0-9a-f]{16}$/.test(id) && id !== '0000000000000000')).toBe(true);
  expect(newTraceId()).toMatch(/^[0-9a-f]{32}$/);
});

test('timestamps keep sub-millisecond precision as whole nanoseconds', () => {
  expect(timestampOf(1_700_000_000_123.5)).toMatchObject({ seconds: 1_700_000_000n, nanos: 123_500_000 });
  expect(timestampOf(1000.000_25)).toMatchObject({ seconds: 1n, nanos: 250 });
  expect(timestampOf(999.9999999)).toMatchObject({ seconds: 0n, nanos: 999_999_999 });
});

test('filters: session, tools and kinds; empty fields match everything; bad requests are explained', () => {
  const event = create(EventSchema, { kind: EventKind.TOOL_POST, sessionId: 's1', tool: 'echo' });
  const f = (init: object) => filterOf(create(SubscribeRequestSchema, init)) as EventFilter;
  expect(matches(f({}), event)).toBe(true);
  expect(matches(f({ sessionId: 's1', tools: ['echo'], kinds: [EventKind.TOOL_POST] }), event)).toBe(true);
  expect(matches(f({ sessionId: 's2' }), event)).toBe(false);
  expect(matches(f({ tools: ['other'] }), event)).toBe(false);
  expect(matches(f({ kinds: [EventKind.TOOL_PRE] }), event)).toBe(false);
  expect(filterOf(create(SubscribeRequestSchema, { kinds: [EventKind.UNSPECIFIED] }))).toBe('unknown event kind 0');
  expect(filterOf(create(SubscribeRequestSchema, { sessionId: 'x'.repeat(257) }))).toBe('session_id is 257 characters long, over the limit of 256');
  expect(filterOf(create(SubscribeRequestSchema, { tools: Array.from({ length: 1025 }, (_, i) => `t${i}`) }))).toBe('1025 tools in the filter, over the limit of 1024');
});

test('a relay batch round-trips tenants and events exactly', () => {
  const events = [
    { tenant: 'acme', event: create(EventSchema, { kind: EventKind.CALL_RECEIVED, sessionId: 's', toolCallId: 'c1', attributes: { a: 'b' }, startTime: timestampOf(1000.5) }) },
    { tenant: '', event: create(EventSchema, { kind: EventKind.BREAKER_STATE, tool: 'x' }) },
  ];
  const decoded = decodeBatch(encodeBatch('replica-1', events));
  expect(decoded.origin).toBe('replica-1');
  expect(decoded.events).toEqual(events);
  expect(decoded.sequences).toEqual([]);
  expect(() => decodeBatch('{"o":1}')).toThrow('not an event batch');
});

test('a relay batch carries its losses and its tenants\' sequences; a malformed sequence is refused', () => {
  const sequences = [{ tenant: 'acme', before: 41, count: 1 }];
  const losses = [{ tenant: 'acme', sessionId: 's', tool: 't', kind: EventKind.TOOL_PRE, count: 3 }];
  const decoded = decodeBatch(encodeBatch('replica-1', [{ tenant: 'acme', event: create(EventSchema, { kind: EventKind.TURN_END }) }], losses, sequences));
  expect(decoded.sequences).toEqual(sequences);
  expect(decoded.losses).toEqual(losses);
  for (const s of [[['acme', -1, 1]], [['acme', 1]], [[1, 1, 1]], [['acme', 1.5, 1]], 'x']) {
    expect(() => decodeBatch(JSON.stringify({ o: 'r', e: [], s }))).toThrow('not an event batch');
  }
});

test('formatEvent: one readable line with what matters for each kind', () => {
  const at = timestampOf(Date.UTC(2025, 0, 1, 12, 0, 1, 250));
  const post = create(EventSchema, { kind: EventKind.TOOL_POST, sessionId: 's1', turn: 2, toolCallId: 'c1', tool: 'get_weather', attempt: 1, startTime: at, endTime: at, attributes: { 'dispatch.outcome': 'ok', 'dispatch.duration_ms': '12', 'dispatch.truncated': 'true', 'dispatch.replay': 'false' }, dropped: 3n });
  expect(formatEvent(post)).toBe('12:00:01.250 TOOL_POST session=s1 turn=2 call=c1 tool=get_weather attempt=1 outcome=ok ms=12 truncated (3 earlier events dropped)');
  const retry = create(EventSchema, { kind: EventKind.RETRY, sessionId: 's1', toolCallId: 'c1', tool: 't', attempt: 1, startTime: at, attributes: { 'dispatch.retry.delay_ms': '250', 'dispatch.reason': 'the tool answered 503' } });
  expect(formatEvent(retry)).toBe('12:00:01.250 RETRY session=s1 turn=0 call=c1 tool=t attempt=1 delay_ms=250 reason="the tool answered 503"');
  const breaker = create(EventSchema, { kind: EventKind.BREAKER_STATE, tool: 'x', startTime: at, endTime: at, attributes: { 'dispatch.breaker.state': 'open' } });
  expect(formatEvent(breaker)).toBe('12:00:01.250 BREAKER_STATE tool=x state=open');
  const resolved = create(EventSchema, { kind: EventKind.APPROVAL_RESOLVED, sessionId: 's1', turn: 1, toolCallId: 'c1', tool: 'charge', attempt: 1, startTime: at, endTime: at, attributes: { 'dispatch.approval_id': 'ap-1', 'dispatch.approval.decision': 'denied', 'dispatch.approval.decided_by': 'acme', 'dispatch.reason': 'ask finance\\u000a' } });
  expect(formatEvent(resolved)).toBe('12:00:01.250 APPROVAL_RESOLVED session=s1 turn=1 call=c1 tool=charge attempt=1 approval=ap-1 decision=denied by=acme reason="ask finance\\\\u000a"');
});

test('formatEvent: values a terminal would act on or hide are quoted and escaped, long ones cut', () => {
  const line = (tool: string, toolCallId = 'c1') => formatEvent(create(EventSchema, { kind: EventKind.CALL_RECEIVED, sessionId: 's1', turn: 1, toolCallId, tool, startTime: timestampOf(Date.UTC(2025, 0, 1, 12, 0, 1, 250)) }));
  // OSC 52 (set the clipboard), BEL, clear the screen, cursor home: C0 controls, which JSON escapes.
  expect(line('\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b[1;1H', 'id\x1b[31m')).toBe('12:00:01.250 CALL_RECEIVED session=s1 turn=1 call="id\\u001b[31m" tool="\\u001b]52;c;cHduZWQ=\\u0007\\u001b[2J\\u001b[1;1H"');
  // DEL, a C1 CSI (U+009B), a right-to-left override and a zero-width space: JSON leaves them raw.
  expect(line('a\x7fb\u009b2Jc')).toBe('12:00:01.250 CALL_RECEIVED session=s1 turn=1 call=c1 tool="a\\u007fb\\u009b2Jc"');
  expect(line('report\u202Efdp.exe\u200b')).toBe('12:00:01.250 CALL_RECEIVED session=s1 turn=1 call=c1 tool="report\\u202efdp.exe\\u200b"');
  expect(line('x'.repeat(100_000))).toBe(`12:00:01.250 CALL_RECEIVED session=s1 turn=1 call=c1 tool=${'x'.repeat(MAX_SHOWN_CHARS)}...`);
  expect(line('get_weather', 'call_é😀')).toBe('12:00:01.250 CALL_RECEIVED session=s1 turn=1 call=call_é😀 tool=get_weather');
  for (const text of ['\x1b', '\u009b', '\u202e', ' \x07']) expect(line(text)).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
});

describe('the lean observer of an unwatched turn', () => {
  const summaries: CallSummary[] = [];
  const env: ObserverEnv = {
    bus: undefined as never,
    debugPayloads: false,
    effectOf: () => '',
    failed: (error) => {
      throw error;
    },
    onCall: (summary) => summaries.push(summary),
  };

  it('passes on the caller\'s traceparent (no tracer: no span of ours is exported), and summarizes what its attempts saw', () => {
    const turn = new LeanTurn({ tenant: 't', sessionId: 's', turn: 1, callCount: 1, traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-03' }, env);
    const call = turn.call({ toolCallId: 'c1', tool: 'weather', arguments: '{}' });
    const first = call.attempt(1, 'weather');
    expect(first.traceparent).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    first.post({ isError: true, errorKind: 'TIMEOUT', resolvedTool: 'weather', durationMs: 5, replay: false, cached: false, truncated: false, outputChars: 0 });
    call.retry(1, 10, 'timeout');
    const second = call.attempt(2, 'weather');
    expect(second.traceparent).toBe(first.traceparent);
    call.end(undefined, 'CANCELLED');
    expect(summaries.at(-1)).toMatchObject({ tenant: 't', tool: 'weather', outcome: 'CANCELLED', attempts: 2, timedOut: true, retried: true, unexpected: false });
  });

  it('starts a trace of its own without a caller traceparent', () => {
    const turn = new LeanTurn({ tenant: 't', sessionId: 's', turn: 1, callCount: 1 }, env);
    expect(turn.call({ toolCallId: 'c', tool: 'x', arguments: '{}' }).attempt(1, 'x').traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
  });
});

test('a loss of the system tenant counts where its tool is seen; one whose tool is not known counts for every subscriber', () => {
  const bus = createEventBus();
  bus.setVisibility((tenant, tool) => tenant === 'acme' && tool === 'x');
  const hooks = { wake: () => undefined, closed: () => undefined };
  const acme = bus.subscribe('acme', { sessionId: '' }, hooks)!;
  const globex = bus.subscribe('globex', { sessionId: '' }, hooks)!;
  bus.reportLost(SYSTEM_TENANT, { sessionId: '', tool: 'x', kind: EventKind.BREAKER_STATE, count: 2 });
  bus.reportLost(SYSTEM_TENANT, { sessionId: '', tool: '', kind: EventKind.UNSPECIFIED, count: 3 });
  bus.deliverLocal('acme', create(EventSchema, { kind: EventKind.TURN_END }));
  bus.deliverLocal('globex', create(EventSchema, { kind: EventKind.TURN_END }));
  expect(acme.next()?.dropped).toBe(5n);
  expect(globex.next()?.dropped).toBe(3n);
  bus.close();
});

test('a loss reported with joinedBy counts only for subscribers that had joined by then', () => {
  const bus = createEventBus();
  const hooks = { wake: () => undefined, closed: () => undefined };
  const early = bus.subscribe('acme', { sessionId: '' }, hooks)!;
  const cutoff = performance.now();
  while (performance.now() <= cutoff);
  const late = bus.subscribe('acme', { sessionId: '' }, hooks)!;
  bus.reportLost('acme', { sessionId: '', tool: '', kind: EventKind.UNSPECIFIED, count: 4 }, cutoff);
  bus.deliverLocal('acme', create(EventSchema, { kind: EventKind.TURN_END }));
  expect(early.next()?.dropped).toBe(4n);
  expect(late.next()?.dropped).toBe(0n);
  bus.close();
});

test('terminal text escapes the invisible characters a review found printed raw (soft hyphen, fillers, tag characters)', () => {
  expect(terminalText('a\u00adb\u034fc\u115fd\u3164e\u{e0041}f')).toBe('a\\u00adb\\u034fc\\u115fd\\u3164e\\u{e0041}f');
  expect(terminalWord('id\u{e0041}')).toBe('"id\\u{e0041}"');
  expect(terminalText('plain 😀 text')).toBe('plain 😀 text');
});

// The set is Unicode's (\p{Cc}, \p{Cf}, \p{Zl}, \p{Zp}, default-ignorables but variation selectors):
// a review found these format characters outside the hand-written set printed raw by dispatchctl.
const FORMAT_CHARS = ['\u180e', '\u0600', '\u0605', '\u06dd', '\u070f', '\u0890', '\u0891', '\u08e2', '\u{110bd}', '\u{110cd}', '\u{13430}', '\u{1343f}', '\u{1bca0}', '\u{1bca3}', '\u{1d173}', '\u{1d17a}'];

test.each(FORMAT_CHARS.map((c) => [`U+${c.codePointAt(0)!.toString(16).toUpperCase()}`, c]))('terminal text escapes the format character %s; an id holding it is quoted', (_name, char) => {
  const code = char.codePointAt(0)!;
  const shown = code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
  expect(terminalText(`a${char}b`)).toBe(`a${shown}b`);
  expect(terminalWord(`prod${char}`)).toBe(`"prod${shown}"`);
});

test('terminal text escapes joiners and the soft hyphen, keeps variation selectors, private use and plain ASCII as they are', () => {
  expect(terminalWord('chat-\u{1F468}\u200D\u{1F469}')).toBe('"chat-\u{1F468}\\u200d\u{1F469}"');
  expect(terminalText('\u0645\u06cc\u200c\u062e')).toBe('\u0645\u06cc\\u200c\u062e');
  expect(terminalText('a\u2065b\u2029c')).toBe('a\\u2065b\\u2029c');
  expect(terminalText('\u{1F3F3}\uFE0F \u{E0100} \ue0a0 \ufdd0')).toBe('\u{1F3F3}\uFE0F \u{E0100} \ue0a0 \ufdd0');
  expect(terminalText('plain ascii ~!')).toBe('plain ascii ~!');
  expect(terminalText('a\tb\nc', true)).toBe('a\tb\nc');
  expect(terminalText('a\tb\r\n')).toBe('a\\u0009b\\u000d\\u000a');
});
