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

/** One verdict line: `name: value (target)` and whether it met the target. */
function verdict(name, ratio, target) {
  const ok = ratio <= target;
  console.log(`${ok ? 'MET ' : 'MISS'} ${name}: ${fixed(ratio, 2)}x (target <= ${target}x)`);
  return { name, ratio, target, ok };
}

module.exports = { table, loadColumns, verdict, fixed };
