'use strict';
const { percentile, createSamples } = require('./stats');

/** Default measured time per measurement, in ms (BENCH_SECONDS overrides). @default 3000 */
const DEFAULT_DURATION_MS = Number(process.env.BENCH_SECONDS || 3) * 1000;
/**
 * Default warmup before each measurement, in ms (BENCH_WARMUP_SECONDS overrides). A long-running
 * server's JIT is warm; a short warmup charges a large code path its optimizing compiler's work.
 * @default 1000
 */
const DEFAULT_WARMUP_MS = process.env.BENCH_WARMUP_SECONDS ? Number(process.env.BENCH_WARMUP_SECONDS) * 1000 : Math.min(3000, DEFAULT_DURATION_MS);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `call` from `concurrency` callers for `durationMs`. Closed loop by default (a caller sends
 * again as soon as it has its answer); with `ratePerSec`, calls are paced to that rate (the k-th
 * call is not sent before start + k/rate), still with at most `concurrency` in flight.
 */
async function loop(call, concurrency, durationMs, samples, ratePerSec) {
  const begin = performance.now();
  const until = begin + durationMs;
  let done = 0;
  let errors = 0;
  let sent = 0;
  let firstError;
  const worker = async () => {
    while (performance.now() < until) {
      if (ratePerSec) {
        const due = begin + (sent++ * 1000) / ratePerSec;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        if (performance.now() >= until) break;
      }
      const started = performance.now();
      try {
        await call();
        samples?.push(performance.now() - started);
        done++;
      } catch (error) {
        errors++;
        firstError ??= error;
        if (errors > 100) throw firstError;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { done, errors, firstError };
}

/**
 * Default rounds each measurement is split into, interleaved with the others (BENCH_ROUNDS
 * overrides: more, shorter rounds track a machine whose load drifts more closely). @default 3
 */
const DEFAULT_ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
/** Warmup at the start of every round after the first, in ms. @default 200 */
const ROUND_WARMUP_MS = 200;

/**
 * Measures closed-loop loads: for each of `loads`, `concurrency` callers each send `call()`
 * again as soon as it answers. `callsPerRequest` is how many tool calls one request carries (8
 * for a turn of 8), so per-call figures divide by calls, not requests. Each load warms up, then
 * the measured time (`durationMs`) is split into `rounds` interleaved with the other loads, so a
 * change in the machine's load during the run hits every load alike; CPU time and calls are
 * summed over the rounds. The server's CPU is read (process.cpuUsage in its own process) around
 * each round. Returns per load: requests/s, calls/s, p50/p99 request latency, server CPU (µs)
 * per call, the server's CPU utilisation, and `rounds` (each round's seconds, calls and server
 * CPU µs, which report.js's roundRatios pairs round by round).
 */
async function measureAll(loads, { durationMs = DEFAULT_DURATION_MS, warmupMs = DEFAULT_WARMUP_MS, rounds = DEFAULT_ROUNDS } = {}) {
  const state = loads.map(() => ({ samples: createSamples(), done: 0, errors: 0, firstError: undefined, seconds: 0, cpuUs: 0, rounds: [] }));
  for (const load of loads) await loop(load.call, load.concurrency, warmupMs, undefined, load.ratePerSec);
  for (let round = 0; round < rounds; round++) {
    for (const [i, load] of loads.entries()) {
      if (round > 0) await loop(load.call, load.concurrency, ROUND_WARMUP_MS, undefined, load.ratePerSec);
      const s = state[i];
      const cpu0 = await load.server.cpu();
      const started = performance.now();
      const out = await loop(load.call, load.concurrency, durationMs / rounds, s.samples, load.ratePerSec);
      const seconds = (performance.now() - started) / 1000;
      const cpu1 = await load.server.cpu();
      s.seconds += seconds;
      s.cpuUs += cpu1.total - cpu0.total;
      s.rounds.push({ seconds, calls: out.done * (load.callsPerRequest ?? 1), cpuUs: cpu1.total - cpu0.total });
      s.done += out.done;
      s.errors += out.errors;
      s.firstError ??= out.firstError;
    }
  }
  return loads.map((load, i) => {
    const s = state[i];
    const sorted = s.samples.sorted();
    const calls = s.done * (load.callsPerRequest ?? 1);
    return {
      ...load,
      call: undefined,
      server: undefined,
      requests: s.done,
      calls,
      errors: s.errors,
      firstError: s.firstError && String(s.firstError.message || s.firstError),
      seconds: s.seconds,
      requestsPerSec: s.done / s.seconds,
      callsPerSec: calls / s.seconds,
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      serverCpuUsPerCall: s.cpuUs / Math.max(1, calls),
      serverCpuUtil: s.cpuUs / 1e6 / s.seconds,
      rounds: s.rounds,
    };
  });
}

/** One load measured alone: {@link measureAll} of a single load. */
async function measure({ durationMs, warmupMs, rounds, ...load }) {
  return (await measureAll([load], { durationMs, warmupMs, rounds }))[0];
}

module.exports = { measure, measureAll, DEFAULT_DURATION_MS, DEFAULT_WARMUP_MS, DEFAULT_ROUNDS };
