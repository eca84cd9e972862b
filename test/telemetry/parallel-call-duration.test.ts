import { DispatchMode } from '../../gen/dispatch/v1/dispatch_pb';
import { startMetricsApp, type MetricsApp } from './metrics-app';
import { PARALLEL_TOOLS } from './parallel-tools';

// A parallel turn fires CALL_RECEIVED (and so starts every call's observer) before its first
// wave runs, and ends each call's observer when the call's wave has finished. The duration
// histogram and the call span must still measure the call itself, as its result's duration_ms
// does: not the waves before it, nor the slowest sibling of its wave.


let d: MetricsApp;
beforeAll(async () => {
  d = await startMetricsApp(PARALLEL_TOOLS);
});
afterAll(() => d?.close());

test('a parallel turn: a quick call beside a 600 ms one, and one in the next wave, each count their own duration, as their results say', async () => {
  const { results } = await d.dispatch.dispatch({
    sessionId: 'p',
    mode: DispatchMode.PARALLEL,
    calls: [
      { id: 'n1', name: 'nap', arguments: '{"ms":600}' },
      { id: 'q1', name: 'quick', arguments: '{}' },
      // Not concurrency-safe: a wave of its own, after the first.
      { id: 's1', name: 'solo', arguments: '{}' },
    ],
  });
  expect(results.map((r) => r.isError)).toEqual([false, false, false]);
  expect(results[0]!.durationMs).toBeGreaterThanOrEqual(600);
  expect(results[1]!.durationMs).toBeLessThan(250);
  expect(results[2]!.durationMs).toBeLessThan(250);
  const m = await d.scrape();
  const labels = (tool: string, le?: string) => ({ tenant: 'default', tool, outcome: 'ok', ...(le ? { le } : {}) });
  expect(m.value('dispatch_tool_call_duration_seconds_bucket', labels('nap', '0.5'))).toBe(0);
  expect(m.value('dispatch_tool_call_duration_seconds_bucket', labels('nap', '1'))).toBe(1);
  // Measured before from the turn's start to the end of the call's wave: ~0.6 s each.
  expect({ quick: m.value('dispatch_tool_call_duration_seconds_bucket', labels('quick', '0.25')), solo: m.value('dispatch_tool_call_duration_seconds_bucket', labels('solo', '0.25')) }).toEqual({ quick: 1, solo: 1 });
  expect(m.value('dispatch_tool_call_duration_seconds_sum', labels('quick'))).toBeLessThan(0.25);
  expect(m.value('dispatch_tool_call_duration_seconds_sum', labels('solo'))).toBeLessThan(0.25);
});
