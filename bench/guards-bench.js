#!/usr/bin/env node
'use strict';
// Issue 4's benchmark: what the guards cost per call, and that the cost stays flat under load.
// 1. Breakers: tryAcquire + record for 100k attempts over 20 tools, in batches of 10k, against a
//    no-op gate measured in the same run. Verdict: the last batches cost no more than the first
//    (medians of three batches each, after the first).
// 2. The memoize cache at its bound (10k entries) for 100k calls: the same flatness verdict.
// 3. Dispatch of one echo call through the whole app with every plugin vs the same app without the
//    guards plugin, server in a child process, by server CPU per call (concurrency 1 and 64).
// 4. Redaction of a 10 KB JSON output against one linear scan of the same text (printed only).
// Needs dist/ (`npx tsc -p .`); `node bench/run.js guards` or `node bench/guards-bench.js`.
// This module is also the server recipe of part 3 (`start(options)`).
const path = require('node:path');
const lib = require('./lib');

const dist = path.join(__dirname, '..', 'dist', 'src');
/** Attempts measured per structure, and the batch size flatness is judged on. */
const TOTAL = 100_000;
const BATCH = 10_000;
/**
 * Target: cost per call of the last batches over the first ones (after the first, which warms up),
 * each side the median of three batches: a batch of a few ms can take a whole GC pause or a
 * background compile on another thread, which says nothing of how the structure grows.
 */
const FLAT_TARGET = 1.5;
/** Target: server CPU per Dispatch with the guards plugin over the same app without it. */
const GUARDS_TARGET = 1.3;

/** Recipe: the app as dispatchd builds it; `guards: false` swaps the guards plugin for an empty one. */
async function start(options = {}) {
  const { buildApp, PLUGINS } = require(path.join(dist, 'app'));
  const { guardsPlugin } = require(path.join(dist, 'app', 'plugins', 'guards-plugin'));
  const { parseConfig } = require(path.join(dist, 'config'));
  const { SILENT_LOGGER } = require(path.join(dist, 'log'));
  const { readFileSync } = require('node:fs');
  const file = path.join(__dirname, '..', 'examples', 'tools.yaml');
  const plugins = options.guards === false ? PLUGINS.map((p) => (p === guardsPlugin ? async () => ({ name: 'guards' }) : p)) : PLUGINS;
  const app = await buildApp(parseConfig(readFileSync(file, 'utf8'), file), { logger: SILENT_LOGGER }, plugins);
  const server = await app.listen('127.0.0.1:0');
  return { port: server.port, close: () => app.close(0) };
}

/** ns and CPU µs per call of each batch of `perCall`. */
function batches(perCall) {
  const rows = [];
  for (let done = 0; done < TOTAL; done += BATCH) {
    const cpu = process.cpuUsage();
    const t = process.hrtime.bigint();
    for (let i = done; i < done + BATCH; i++) perCall(i);
    const c = process.cpuUsage(cpu);
    rows.push({ ns: Number(process.hrtime.bigint() - t) / BATCH, cpuNs: ((c.user + c.system) * 1000) / BATCH });
  }
  return rows;
}

const mean = (values) => values.reduce((s, v) => s + v, 0) / values.length;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
/** Batches on each side of the flatness comparison. */
const SIDE = 3;

function flatness(label, rows, baselineRows) {
  const steady = rows.slice(1);
  return {
    label,
    nsPerCall: mean(steady.map((r) => r.ns)),
    cpuNsPerCall: mean(steady.map((r) => r.cpuNs)),
    first: median(steady.slice(0, SIDE).map((r) => r.cpuNs)),
    last: median(steady.slice(-SIDE).map((r) => r.cpuNs)),
    baseline: baselineRows && mean(baselineRows.slice(1).map((r) => r.cpuNs)),
  };
}

function inProcess() {
  const { createBreakers } = require(path.join(dist, 'guards'));
  const { createMemoCache } = require(path.join(dist, 'middleware'));
  const { OPEN_GATE } = require(path.join(dist, 'pipeline'));
  const tools = Array.from({ length: 20 }, (_, i) => `tool_${i}`);
  const outcomes = [{ ok: false, counts: true, durationMs: 1 }, ...Array(9).fill({ ok: true, counts: true, durationMs: 1 })];
  const drive = (gate) => (i) => {
    const tool = tools[i % 20];
    const ticket = gate.tryAcquire(tool, 1000);
    if (ticket) gate.record(tool, ticket, outcomes[i % 10]);
  };
  const baseline = batches(drive(OPEN_GATE));
  const breakers = createBreakers();
  const breakerRows = batches(drive(breakers.gate));
  breakers.close();
  const cache = createMemoCache();
  const keys = Array.from({ length: TOTAL }, (_, i) => `k${i}:abcdefghijklmnopqrstuvwxyz0123456789`);
  const value = { text: 'an output of a read-only tool, cached for a minute' };
  const cacheRows = batches((i) => {
    if (!cache.get(keys[i])) cache.set(keys[i], value, 60_000);
  });
  return [flatness('breakers: tryAcquire + record', breakerRows, baseline), flatness('memoize cache at 10k entries: get + set', cacheRows)];
}

function redaction() {
  const { redactSecrets } = require(path.join(dist, 'middleware'));
  const text = JSON.stringify(Array.from({ length: 120 }, (_, i) => ({ id: i, title: `Result number ${i} about the weather`, url: `https://example.com/items/${i}` })));
  const time = (fn, runs = 2000) => {
    for (let i = 0; i < 200; i++) fn();
    const cpu = process.cpuUsage();
    for (let i = 0; i < runs; i++) fn();
    const c = process.cpuUsage(cpu);
    return (c.user + c.system) / runs;
  };
  const scan = time(() => {
    let n = 0;
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 0) n++;
    return n;
  });
  return { chars: text.length, scanUs: scan, redactUs: time(() => redactSecrets(text)) };
}

async function overGrpc(options) {
  const requests = lib.dispatchRequests({ calls: 1 });
  const guarded = await lib.startServerProcess(__filename, {}, { profileFile: options.profileDir && path.join(options.profileDir, 'guards-app.cpuprofile') });
  const bare = await lib.startServerProcess(__filename, { guards: false });
  const guardedClient = lib.createRawClient(guarded.address);
  const bareClient = lib.createRawClient(bare.address);
  try {
    const answer = lib.decodeResponse(await guardedClient.unary(lib.DISPATCH_PATH, requests.next())).results[0];
    if (!answer || answer.isError) throw new Error(`Dispatch of echo failed: ${answer ? answer.output : 'no result'}`);
    const loads = [1, 64].flatMap((concurrency) => [
      { label: 'Dispatch 1 echo call, no guards plugin', kind: 'bare', concurrency, server: bare, call: () => bareClient.unary(lib.DISPATCH_PATH, requests.next()) },
      { label: 'Dispatch 1 echo call, every plugin', kind: 'guarded', concurrency, server: guarded, call: () => guardedClient.unary(lib.DISPATCH_PATH, requests.next()) },
    ]);
    return await lib.measureAll(loads, options);
  } finally {
    guardedClient.close();
    bareClient.close();
    await Promise.all([guarded.stop(), bare.stop()]);
  }
}

async function run(options = {}) {
  const verdicts = [];
  const flat = inProcess();
  lib.table(`guards in-process: ${TOTAL} calls in batches of ${BATCH} (CPU ns per call)`, flat, [
    { label: 'structure', format: (r) => r.label },
    { label: 'CPU ns/call', format: (r) => lib.fixed(r.cpuNsPerCall, 0) },
    { label: 'wall ns/call', format: (r) => lib.fixed(r.nsPerCall, 0) },
    { label: `batches 2-${SIDE + 1}`, format: (r) => lib.fixed(r.first, 0) },
    { label: `last ${SIDE}`, format: (r) => lib.fixed(r.last, 0) },
    { label: 'no-op gate', format: (r) => (r.baseline === undefined ? '-' : lib.fixed(r.baseline, 0)) },
  ]);
  for (const r of flat) verdicts.push(lib.verdict(`${r.label}: last ${SIDE} batches ÷ batches 2-${SIDE + 1} (medians), CPU per call`, r.last / r.first, FLAT_TARGET));
  const red = redaction();
  console.log(`\nredaction of a ${red.chars}-character JSON output: ${red.redactUs.toFixed(1)} µs (${(red.chars / red.redactUs).toFixed(0)} chars/µs); one linear scan of it: ${red.scanUs.toFixed(1)} µs (${(red.redactUs / red.scanUs).toFixed(1)}x)`);
  const rows = await overGrpc(options);
  const bareAt = (row) => rows.find((r) => r.kind === 'bare' && r.concurrency === row.concurrency);
  lib.table('guards over gRPC: the app without vs with the guards plugin (server in a child process)', rows, lib.loadColumns(bareAt).map((c) => (c.label.includes('÷ bare') ? { ...c, label: c.label.replace('bare', 'no guards') } : c)));
  for (const r of rows.filter((x) => x.kind === 'guarded')) {
    verdicts.push(lib.verdict(`server CPU/call with guards ÷ without, concurrency ${r.concurrency}`, r.serverCpuUsPerCall / bareAt(r).serverCpuUsPerCall, GUARDS_TARGET, lib.roundRatios(r, bareAt(r))));
  }
  return { verdicts };
}

module.exports = { run, start };

if (require.main === module) run().then(({ verdicts }) => process.exit(verdicts.every((v) => v.ok) ? 0 : 1));
