'use strict';

const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : '-');

/** Prints rows of objects as an aligned table under `title`. */
function table(title, rows, columns) {
  const header = columns.map((c) => c.label);
  const body = rows.map((row) => columns.map((c) => c.format(row)));
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (cells) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
  console.log(`\n${title}`);
  console.log(line(header));
  for (const r of body) console.log(line(r));
}

/** The columns of a load measurement, with the ratio of server CPU per call to `baseline`. */
function loadColumns(baselineOf) {
  return [
    { label: 'measurement', format: (r) => r.label },
    { label: 'conc', format: (r) => String(r.concurrency) },
    { label: 'calls/s', format: (r) => fixed(r.callsPerSec, 0) },
    { label: 'p50 ms', format: (r) => fixed(r.p50Ms, 2) },
    { label: 'p99 ms', format: (r) => fixed(r.p99Ms, 2) },
    { label: 'server CPU µs/call', format: (r) => fixed(r.serverCpuUsPerCall, 1) },
    { label: 'server CPU util', format: (r) => fixed(r.serverCpuUtil, 2) },
    { label: 'CPU/call ÷ bare', format: (r) => fixed(r.serverCpuUsPerCall / baselineOf(r).serverCpuUsPerCall, 2) },
    { label: 'calls/s ÷ bare', format: (r) => fixed(r.callsPerSec / baselineOf(r).callsPerSec, 2) },
    { label: 'errors', format: (r) => String(r.errors) },
  ];
}

const PER_ROUND = {
  cpu: (round) => round.cpuUs / Math.max(1, round.calls),
  rate: (round) => round.calls / round.seconds,
};

/**
 * The ratio of `row` to `baseline` in each measured round, the two paired by round number: loads
 * interleave, so round k of each ran within seconds of the other, under the same machine load.
 * `metric` is 'cpu' (server CPU per call) or 'rate' (calls per second).
 */
function roundRatios(row, baseline, metric = 'cpu') {
  const of = PER_ROUND[metric];
  const n = Math.min(row.rounds?.length ?? 0, baseline.rounds?.length ?? 0);
  return Array.from({ length: n }, (_, k) => of(row.rounds[k]) / of(baseline.rounds[k]));
}

/** The median and the middle half (quartiles) of `values`. */
function spread(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => {
    const i = (sorted.length - 1) * q;
    const lo = Math.floor(i);
    return sorted[lo] + (sorted[Math.min(lo + 1, sorted.length - 1)] - sorted[lo]) * (i - lo);
  };
  return { median: at(0.5), low: at(0.25), high: at(0.75), n: sorted.length };
}

/**
 * One verdict line: `name: value (target)` and whether it met the target. The verdict is on
 * `ratio` (of the totals over every round); with `perRound` (from {@link roundRatios}), the line
 * also shows how the round-by-round ratios spread, so a verdict decided by one noisy round shows.
 */
function verdict(name, ratio, target, perRound) {
  const ok = ratio <= target;
  const s = perRound && perRound.length > 1 ? spread(perRound) : undefined;
  const rounds = s ? `; by round: median ${fixed(s.median, 2)}x, middle half ${fixed(s.low, 2)}-${fixed(s.high, 2)}x over ${s.n} rounds` : '';
  console.log(`${ok ? 'MET ' : 'MISS'} ${name}: ${fixed(ratio, 2)}x (target <= ${target}x)${rounds}`);
  return { name, ratio, target, ok, ...(s ? { roundMedian: s.median, roundLow: s.low, roundHigh: s.high, rounds: s.n } : {}) };
}

module.exports = { table, loadColumns, verdict, roundRatios, spread, fixed };
