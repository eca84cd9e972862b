import { create } from '@bufbuild/protobuf';
import { ToolRatesSchema, ToolStatsSchema } from '../../gen/dispatch/v1/registry_pb';
import { formatStats } from '../../src/cli/format-stats';

// dispatchctl stats' rates line: the window in minutes, hours (a day is 24 h) or seconds, and an
// empty window said in words rather than as rates of 0.0% that read as measured.

const statsOf = (windowSeconds: number, windowCalls: bigint) =>
  create(ToolStatsSchema, { tool: 'lookup', calls: 7n, windowSeconds, windowCalls, rates: create(ToolRatesSchema, { validationFailure: windowCalls > 0n ? 0.5 : 0 }) });
const ratesLine = (windowSeconds: number, windowCalls: bigint) => formatStats(statsOf(windowSeconds, windowCalls)).split('\n')[1];

test.each([
  [86_400, 'last 24 h, 4 calls: validation 50.0%'],
  [7_200, 'last 2 h, 4 calls: '],
  [5_400, 'last 90 min, 4 calls: '],
  [900, 'last 15 min, 4 calls: '],
  [45, 'last 45 s, 4 calls: '],
])('a %i s window with calls: %s', (seconds, start) => {
  expect(ratesLine(seconds, 4n)).toContain(`  ${start}`);
});

test('an empty window says so, with no rates', () => {
  expect(ratesLine(900, 0n)).toBe('  no calls in the last 15 min');
  expect(ratesLine(86_400, 0n)).toBe('  no calls in the last 24 h');
});

// A server that predates the error rate sends none, nor its threshold: the new dispatchctl showed
// "errors 0.0%" for a tool failing every call (a config author's probe, mid-upgrade).
test('the error rate is shown only when the server sends its threshold', () => {
  const from = (alertThresholds?: { error: number }) =>
    formatStats(create(ToolStatsSchema, { tool: 'lookup', calls: 4n, windowSeconds: 900, windowCalls: 4n, rates: create(ToolRatesSchema, { error: 1 }), alertThresholds: alertThresholds && create(ToolRatesSchema, alertThresholds) })).split('\n')[1];
  expect(from({ error: 0.5 })).toBe('  last 15 min, 4 calls: validation 0.0%  timeout 0.0%  retry 0.0%  idempotent 0.0%  bounding 0.0%  unexpected 0.0%  errors 100.0%');
  expect(from()).toBe('  last 15 min, 4 calls: validation 0.0%  timeout 0.0%  retry 0.0%  idempotent 0.0%  bounding 0.0%  unexpected 0.0%');
});
