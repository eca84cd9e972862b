import { EventKind, type Event } from '../../gen/dispatch/v1/dispatch_pb';
import { createEventBus, createEventObserver, nowMs } from '../../src/events';
import { SILENT_LOGGER } from '../../src/log';

// nowMs() (event and span times) re-anchors the monotonic clock to the wall clock every 10 s. The
// anchor moves either way by up to a millisecond or so: Date.now()'s millisecond floor, and the
// wall clock's drift against the monotonic one (Date.now() - performance.now() measured here
// wandering over 0.7-1.5 ms within 12 s; three runs of 31 s had re-anchors move it back by 0.71,
// 0.16, 0.49 and 0.18 ms). call-duration.test.ts keeps durations off it; this is about the events'
// own times.

/** performance.now() and Date.now() as the test sets them, within `body`. */
function withClocks(body: (set: (mono: number, wall: number) => void) => void): void {
  let mono = performance.now();
  let wall = Date.now();
  const perf = jest.spyOn(performance, 'now').mockImplementation(() => mono);
  const date = jest.spyOn(Date, 'now').mockImplementation(() => wall);
  try {
    body((m, w) => {
      mono = m;
      wall = w;
    });
  } finally {
    perf.mockRestore();
    date.mockRestore();
  }
}

const ms = (t: Event['startTime']) => Number(t!.seconds) * 1000 + t!.nanos / 1e6;

test('a fast call across a re-anchor that moved the clock back: its TOOL_POST ends no earlier than it began, and no event is dated before the one it follows', () => {
  const bus = createEventBus();
  const subscription = bus.subscribe('acme', { sessionId: '' }, { wake: () => undefined, closed: () => undefined })!;
  const observer = createEventObserver({ bus, logger: SILENT_LOGGER });
  withClocks((set) => {
    // Well past any anchor: this read re-anchors at (mono0, wall0).
    const mono0 = performance.now() + 60_000;
    const wall0 = Date.now();
    set(mono0, wall0);
    nowMs();
    // 0.1 ms before the next re-anchor the call starts; it runs 0.2 ms, and ends past the
    // re-anchor, where the wall clock reads 1.1 ms behind the monotonic one (its millisecond
    // floor and drift).
    set(mono0 + 9_999.9, wall0 + 9_999);
    const turn = observer.turn({ tenant: 'acme', sessionId: 's', turn: 1, callCount: 1 });
    const call = turn.call({ toolCallId: 'c1', tool: 'lookup', arguments: '{}' });
    const attempt = call.attempt(1, 'lookup');
    set(mono0 + 10_000.1, wall0 + 9_999);
    attempt.post({ isError: false, resolvedTool: 'lookup', durationMs: 0.2, replay: false, cached: false, truncated: false, outputChars: 2 });
    call.end(undefined, 'CANCELLED');
    turn.end();
  });
  const events: Event[] = [];
  for (let e = subscription.next(); e; e = subscription.next()) events.push(e);
  subscription.close();
  expect(events.map((e) => EventKind[e.kind])).toEqual(['CALL_RECEIVED', 'TOOL_PRE', 'TOOL_POST', 'TURN_END']);
  const post = events[2]!;
  expect(ms(post.endTime)).toBeGreaterThanOrEqual(ms(post.startTime));
  // Each event's time (its end when it has one) is no earlier than the one before it.
  const times = events.map((e) => ms(e.endTime ?? e.startTime));
  for (let i = 1; i < times.length; i++) expect(times[i]).toBeGreaterThanOrEqual(times[i - 1]!);
});
