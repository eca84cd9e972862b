'use strict';
// Issue 5's benchmark: a turn of 8 echo calls in one parallel Dispatch vs 8 single-call
// Dispatches, with the same number of calls in flight, judged by the server's CPU time per call
// against a bare grpc-js echo measured in the same run.
const lib = require('./lib');

/** Calls in a turn. */
const TURN = 8;
/** Calls in flight per measurement: one turn at a time, and eight turns at a time. */
const IN_FLIGHT = [8, 64];
/** Target: a turn's server CPU per call over the bare echo's. */
const TARGET_RATIO = 0.5;

async function run(options = {}) {
  const singles = lib.dispatchRequests({ calls: 1 });
  const turns = lib.dispatchRequests({ calls: TURN, mode: 'parallel' });
  const bare = await lib.startServerProcess(lib.RECIPES.bareEcho);
  const app = await lib.startServerProcess(lib.RECIPES.dispatchApp, {}, { profileFile: options.profileDir && require('node:path').join(options.profileDir, 'dispatch-app.cpuprofile') });
  const bareClient = lib.createRawClient(bare.address);
  const appClient = lib.createRawClient(app.address);
  try {
    const answer = lib.decodeResponse(await appClient.unary(lib.DISPATCH_PATH, turns.next())).results;
    if (answer.length !== TURN || answer.some((r, i) => r.isError || r.toolCallId !== `call_${i}`)) throw new Error(`a parallel turn failed: ${JSON.stringify(answer.map((r) => r.output))}`);
    // The verdicts compare at equal calls in flight; a bare echo with one request in flight shows
    // the turn against the same number of requests (one turn at a time), as information.
    const loads = [
      { label: 'bare grpc-js echo', kind: 'bare', concurrency: 1, server: bare, call: () => bareClient.unary(lib.ECHO_PATH, singles.next()) },
      ...IN_FLIGHT.flatMap((calls) => [
        { label: 'bare grpc-js echo', kind: 'bare', concurrency: calls, server: bare, call: () => bareClient.unary(lib.ECHO_PATH, singles.next()) },
        { label: '8 single-call Dispatches', kind: 'singles', concurrency: calls, server: app, call: () => appClient.unary(lib.DISPATCH_PATH, singles.next()) },
        { label: 'one Dispatch of 8 (parallel)', kind: 'turn', concurrency: calls / TURN, callsPerRequest: TURN, server: app, call: () => appClient.unary(lib.DISPATCH_PATH, turns.next()) },
      ]),
    ];
    const rows = await lib.measureAll(loads, options);
    const inFlight = (r) => r.concurrency * (r.kind === 'turn' ? TURN : 1);
    const bareAt = (row) => rows.find((r) => r.kind === 'bare' && r.concurrency === inFlight(row));
    lib.table('waves: 8 calls in one parallel Dispatch vs 8 single-call Dispatches (conc = requests in flight; per-call figures divide by calls)', rows, lib.loadColumns(bareAt));
    const verdicts = [];
    for (const r of rows.filter((x) => x.kind === 'turn')) {
      const single = rows.find((x) => x.kind === 'singles' && x.concurrency === inFlight(r));
      console.log(`  ${inFlight(r)} calls in flight: turn-of-8 CPU/call ÷ single-call Dispatch CPU/call = ${lib.fixed(r.serverCpuUsPerCall / single.serverCpuUsPerCall, 2)}`);
      const sameRequests = rows.find((x) => x.kind === 'bare' && x.concurrency === r.concurrency);
      if (sameRequests) console.log(`  ${r.concurrency} request(s) in flight: turn-of-8 CPU/call ÷ bare echo CPU/call with as many requests in flight = ${lib.fixed(r.serverCpuUsPerCall / sameRequests.serverCpuUsPerCall, 2)} (information; the verdict compares equal calls in flight)`);
      verdicts.push(lib.verdict(`turn-of-8 server CPU/call vs bare echo, ${inFlight(r)} calls in flight`, r.serverCpuUsPerCall / bareAt(r).serverCpuUsPerCall, TARGET_RATIO, lib.roundRatios(r, bareAt(r))));
    }
    return { rows, verdicts };
  } finally {
    bareClient.close();
    appClient.close();
    await Promise.all([bare.stop(), app.stop()]);
  }
}

module.exports = { run };
