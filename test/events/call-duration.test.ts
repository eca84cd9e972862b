import { createEventBus, createEventObserver, nowMs, type CallSummary } from '../../src/events';
import { SILENT_LOGGER } from '../../src/log';
import { createToolStats, startMetrics, type Metrics } from '../../src/telemetry';
import { scrapeOnce } from '../telemetry/metrics-app';
import { parsePrometheus } from '../telemetry/prometheus-text';

// nowMs() (event and span times) re-anchors the monotonic clock to the wall clock every 10 s; the
// wall clock's millisecond floor and NTP's slewing move the anchor by up to a millisecond or so
// either way, more on a step. A call's duration (the histogram, GetToolStats) must come from the
// monotonic clock alone: a call crossing a re-anchor that moved back measured negative, and
// dispatch_tool_call_duration_seconds_sum went down, which Prometheus' rate() reads as a reset.

/** performance.now() and Date.now() as the test sets them, within `body`. */
async function withClocks<T>(body: (set: (mono: number, wall: number) => void) => Promise<T> | T): Promise<T> {
  let mono = performance.now();
  let wall = Date.now();
  const perf = jest.spyOn(performance, 'now').mockImplementation(() => mono);
  const date = jest.spyOn(Date, 'now').mockImplementation(() => wall);
  try {
    return await body((m, w) => {
      mono = m;
      wall = w;
    });
  } finally {
    perf.mockRestore();
    date.mockRestore();
  }
}

/** Where the last re-anchor left the monotonic clock: each call starts a minute past it, so that it re-anchors. */
let clockBase = 0;

/** A call of 0.5 ms (monotonic) across a re-anchor that moved the wall clock's anchor back 1.3 ms; its summary. */
async function callAcrossReanchor(watched: boolean): Promise<CallSummary> {
  const summaries: CallSummary[] = [];
  const bus = createEventBus();
  const hooks = { wake: () => undefined, closed: () => undefined };
  const subscription = watched ? bus.subscribe('acme', { sessionId: '' }, hooks) : undefined;
  const observer = createEventObserver({ bus, onCall: (s) => summaries.push(s), logger: SILENT_LOGGER });
  await withClocks((set) => {
    // Well past any anchor: this read re-anchors at (mono0, wall0).
    const mono0 = (clockBase = Math.max(clockBase, performance.now()) + 60_000);
    const wall0 = Date.now();
    set(mono0, wall0);
    nowMs();
    // 0.2 ms before the next re-anchor, the call starts.
    set(mono0 + 9_999.8, wall0 + 9_999.8);
    const turn = observer.turn({ tenant: 'acme', sessionId: 's', turn: 1, callCount: 1 });
    const call = turn.call({ toolCallId: 'c1', tool: 'lookup', arguments: '{}' });
    call.attempt(1, 'lookup').post({ isError: false, resolvedTool: 'lookup', durationMs: 0, replay: false, cached: false, truncated: false, outputChars: 2 });
    // 0.5 ms later it ends, past the re-anchor; the wall clock reads 1.3 ms behind the monotonic one.
    set(mono0 + 10_000.3, wall0 + 9_999);
    call.end(undefined, 'CANCELLED');
    turn.end();
  });
  subscription?.close();
  expect(summaries).toHaveLength(1);
  return summaries[0]!;
}

test.each([
  ['unwatched (lean observer)', false],
  ['watched (full observer)', true],
])('a call that ends past a re-anchor of the wall clock keeps its monotonic duration: %s', async (_, watched) => {
  const summary = await callAcrossReanchor(watched);
  expect(summary.durationMs).toBeCloseTo(0.5, 3);
});

test('the duration histogram never goes down: its _sum grows by each call', async () => {
  const stats = createToolStats();
  let metrics: Metrics | undefined;
  try {
    metrics = await startMetrics({ listen: '127.0.0.1:0', stats, breakerStates: () => new Map(), subscribers: () => 0, logger: SILENT_LOGGER });
    metrics.recordCall(await callAcrossReanchor(false));
    const scrape = parsePrometheus(await scrapeOnce(metrics.port));
    const labels = { tenant: 'acme', tool: 'lookup', outcome: 'CANCELLED' };
    expect(scrape.value('dispatch_tool_call_duration_seconds_count', labels)).toBe(1);
    expect(scrape.value('dispatch_tool_call_duration_seconds_sum', labels)).toBeGreaterThanOrEqual(0);
  } finally {
    await metrics?.shutdown();
  }
});
