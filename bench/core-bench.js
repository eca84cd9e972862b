'use strict';
// Issue 2's benchmark: a bare grpc-js unary echo vs Dispatch of one `echo` call through the whole
// pipeline, at concurrency 1 and 64, judged by the server's CPU time per call. A third row, the
// core pipeline without any plugin, shows what the plugins (telemetry, guards, ...) add.
const lib = require('./lib');

/** Concurrency levels measured. */
const CONCURRENCY = [1, 64];
/** Target: Dispatch's server CPU per call over the bare echo's. */
const TARGET_RATIO = 1.5;

async function run(options = {}) {
  const requests = lib.dispatchRequests({ calls: 1 });
  const bare = await lib.startServerProcess(lib.RECIPES.bareEcho);
  const app = await lib.startServerProcess(lib.RECIPES.dispatchApp, {}, { profileFile: options.profileDir && require('node:path').join(options.profileDir, 'dispatch-app.cpuprofile') });
  const core = await lib.startServerProcess(lib.RECIPES.dispatchApp, { plugins: false });
  const bareClient = lib.createRawClient(bare.address);
  const appClient = lib.createRawClient(app.address);
  const coreClient = lib.createRawClient(core.address);
  try {
    const answer = lib.decodeResponse(await appClient.unary(lib.DISPATCH_PATH, requests.next())).results[0];
    if (!answer || answer.isError) throw new Error(`Dispatch of echo failed: ${answer ? answer.output : 'no result'}`);
    console.log(`request size ${requests.size} bytes (both servers); a Dispatch answers e.g. ${answer.output}`);
    const loads = CONCURRENCY.flatMap((concurrency) => [
      { label: 'bare grpc-js echo', kind: 'bare', concurrency, server: bare, call: () => bareClient.unary(lib.ECHO_PATH, requests.next()) },
      { label: 'Dispatch 1 echo call', kind: 'dispatch', concurrency, server: app, call: () => appClient.unary(lib.DISPATCH_PATH, requests.next()) },
      { label: '  same, core pipeline only (no plugins)', kind: 'core', concurrency, server: core, call: () => coreClient.unary(lib.DISPATCH_PATH, requests.next()) },
    ]);
    const rows = await lib.measureAll(loads, options);
    const bareAt = (row) => rows.find((r) => r.kind === 'bare' && r.concurrency === row.concurrency);
    lib.table('core: bare grpc-js echo vs Dispatch of one echo call (server in a child process)', rows, lib.loadColumns(bareAt));
    const verdicts = rows
      .filter((r) => r.kind === 'dispatch')
      .map((r) => lib.verdict(`Dispatch server CPU/call vs bare echo, concurrency ${r.concurrency}`, r.serverCpuUsPerCall / bareAt(r).serverCpuUsPerCall, TARGET_RATIO, lib.roundRatios(r, bareAt(r))));
    return { rows, verdicts };
  } finally {
    bareClient.close();
    appClient.close();
    coreClient.close();
    await Promise.all([bare.stop(), app.stop(), core.stop()]);
  }
}

module.exports = { run };
