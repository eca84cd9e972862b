'use strict';
// Issue 6's benchmark: Dispatch of one echo call with OTLP trace export on (to a local OTLP/HTTP
// sink) vs off, judged by the dispatch server's CPU time per call. Both servers are the whole app
// (every plugin) in their own child processes; export is switched on exactly as in production,
// by the standard OTEL_* variables. The sink counts what it receives, proving export happened.
// A third server samples 10% of traces (the standard sampler variables), to show what head
// sampling saves; the verdict is on the default, where every trace is exported. A fourth runs as
// the Helm chart deploys dispatchd (Prometheus metrics and bearer-token auth on, traces off), to
// show what those cost. A fifth exports like the second but has its sampling switched off and on
// round by round (informative): one process measured both ways, so the ratio of its rounds is
// free of the ±10-15% by which two identical server processes can differ for a whole run here.
//
// This module is also the servers' recipe: the child requires it and calls `start(options)`,
// which sets the child's OTEL_* variables before building the app.
const { fork } = require('node:child_process');
const http = require('node:http');
const lib = require('./lib');

/** Concurrency levels measured. */
const CONCURRENCY = [1, 64];
/** Target: server CPU per call with export on (every trace sampled, the default) over export off. */
const TARGET_RATIO = 1.15;
/**
 * The paced load (informative): both servers at the same offered rate, up to 64 in flight. In a
 * closed loop the slower server also serves fewer calls per second, so its fixed costs per event
 * loop turn are shared by fewer calls; at one rate, only the work per call differs.
 */
const PACED = { ratePerSec: 1500, concurrency: 64 };
/** The head-sampling ratio of the informative third server (OTEL_TRACES_SAMPLER=parentbased_traceidratio). */
const SAMPLED_RATIO = 0.1;
/** The bearer token of the informative server with the Helm chart's defaults (metrics and auth on). */
const HELM_TOKEN = 'bench-token';

/** Whether a server started with `switchable` samples its traces (switched by `onMessage`). */
let sampling = true;

/**
 * Recipe entry, run in the child: the dispatch app, with OTEL_* set from `options.otel`. With
 * `switchable`, the default sampler (parentbased_always_on) samples only while `onMessage` has
 * last said `{ sampling: true }`: a switch for this benchmark's child, not a feature of dispatch.
 */
async function start(options = {}) {
  for (const key of Object.keys(process.env)) if (key.startsWith('OTEL_')) delete process.env[key];
  Object.assign(process.env, options.otel ?? {});
  if (options.switchable) {
    const { ParentBasedSampler, SamplingDecision } = require('@opentelemetry/sdk-trace-base');
    const shouldSample = ParentBasedSampler.prototype.shouldSample;
    const notSampled = { decision: SamplingDecision.NOT_RECORD };
    ParentBasedSampler.prototype.shouldSample = function (...args) {
      return sampling ? shouldSample.apply(this, args) : notSampled;
    };
  }
  return require(lib.RECIPES.dispatchApp).start({ metrics: options.metrics, authToken: options.authToken });
}

/** Recipe entry, run in the child: `{ sampling }` switches a switchable server's sampling. */
function onMessage(message) {
  if (typeof message?.sampling === 'boolean') sampling = message.sampling;
  return sampling;
}

/** `server` as a load sees it, switching its sampling to `on` at each CPU reading (so at the start of each of the load's rounds). */
function withSampling(server, on) {
  return { ...server, cpu: async () => (await server.request({ sampling: on }), server.cpu()) };
}

/** Serves an OTLP/HTTP sink on loopback that answers 200 at once; reports counts on request. */
async function serveSink() {
  const counts = { requests: 0, bytes: 0 };
  const server = http.createServer((req, res) => {
    req.on('data', (chunk) => (counts.bytes += chunk.length));
    req.on('end', () => {
      counts.requests++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.on('message', (message) => (message === 'counts' ? process.send({ counts }) : process.exit(0)));
  process.on('disconnect', () => process.exit(0));
  process.send({ port: server.address().port });
}

/** The sink in its own process, so that receiving spans costs neither the client nor the server. */
function startSink() {
  const child = fork(__filename, ['--sink'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('message', ({ port }) => {
      resolve({
        url: `http://127.0.0.1:${port}/v1/traces`,
        counts: () => new Promise((done) => (child.once('message', (m) => done(m.counts)), child.send('counts'))),
        close: () => new Promise((done) => (child.once('exit', done), child.send('stop'))),
      });
    });
  });
}

async function run(options = {}) {
  const sink = await startSink();
  const requests = lib.dispatchRequests({ calls: 1 });
  const profile = (name) => ({ profileFile: options.profileDir && require('node:path').join(options.profileDir, `${name}.cpuprofile`) });
  const off = await lib.startServerProcess(__filename, { otel: {} }, profile('telemetry-off'));
  const exportTo = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: sink.url, OTEL_SERVICE_NAME: 'dispatch-bench' };
  const on = await lib.startServerProcess(__filename, { otel: exportTo }, profile('telemetry-on'));
  const sampled = await lib.startServerProcess(__filename, { otel: { ...exportTo, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: String(SAMPLED_RATIO) } });
  const metered = await lib.startServerProcess(__filename, { otel: {}, metrics: true, authToken: HELM_TOKEN });
  const switched = await lib.startServerProcess(__filename, { otel: exportTo, switchable: true });
  const offClient = lib.createRawClient(off.address);
  const onClient = lib.createRawClient(on.address);
  const sampledClient = lib.createRawClient(sampled.address);
  const meteredClient = lib.createRawClient(metered.address);
  const switchedClient = lib.createRawClient(switched.address);
  const helmMetadata = new (require('@grpc/grpc-js').Metadata)();
  helmMetadata.set('authorization', `Bearer ${HELM_TOKEN}`);
  try {
    for (const client of [offClient, onClient, sampledClient, meteredClient, switchedClient]) {
      const answer = lib.decodeResponse(await client.unary(lib.DISPATCH_PATH, requests.next(), client === meteredClient ? helmMetadata : undefined)).results[0];
      if (!answer || answer.isError) throw new Error(`Dispatch of echo failed: ${answer ? answer.output : 'no result'}`);
    }
    const loads = CONCURRENCY.flatMap((concurrency) => [
      { label: 'trace export off', kind: 'off', concurrency, server: off, call: () => offClient.unary(lib.DISPATCH_PATH, requests.next()) },
      { label: 'trace export on (OTLP to a local sink)', kind: 'on', concurrency, server: on, call: () => onClient.unary(lib.DISPATCH_PATH, requests.next()) },
      { label: `  same, ${SAMPLED_RATIO * 100}% of traces sampled (informative)`, kind: 'sampled', concurrency, server: sampled, call: () => sampledClient.unary(lib.DISPATCH_PATH, requests.next()) },
      { label: '  trace export off, metrics and bearer auth on, as Helm deploys it (informative)', kind: 'helm', concurrency, server: metered, call: () => meteredClient.unary(lib.DISPATCH_PATH, requests.next(), helmMetadata) },
      { label: '  one process, sampling on in its rounds (informative)', kind: 'switched-on', concurrency, server: withSampling(switched, true), call: () => switchedClient.unary(lib.DISPATCH_PATH, requests.next()) },
      { label: '  the same process, sampling off in its rounds (informative)', kind: 'switched-off', concurrency, server: withSampling(switched, false), call: () => switchedClient.unary(lib.DISPATCH_PATH, requests.next()) },
    ]);
    loads.push(
      { label: `trace export off, paced to ${PACED.ratePerSec}/s`, kind: 'off-paced', ...PACED, server: off, call: () => offClient.unary(lib.DISPATCH_PATH, requests.next()) },
      { label: `trace export on, paced to ${PACED.ratePerSec}/s (informative)`, kind: 'on-paced', ...PACED, server: on, call: () => onClient.unary(lib.DISPATCH_PATH, requests.next()) },
    );
    const rows = await lib.measureAll(loads, options);
    const offAt = (row) => rows.find((r) => r.kind === (row.kind.endsWith('-paced') ? 'off-paced' : 'off') && r.concurrency === row.concurrency);
    const columns = lib.loadColumns(offAt).map((c) => (c.label.endsWith('÷ bare') ? { ...c, label: c.label.replace('÷ bare', '÷ off') } : c));
    lib.table('telemetry: Dispatch of one echo call, OTLP trace export on vs off (servers in child processes)', rows, columns);
    for (const r of rows.filter((x) => x.kind === 'switched-on')) {
      const off = rows.find((x) => x.kind === 'switched-off' && x.concurrency === r.concurrency);
      const s = lib.spread(lib.roundRatios(r, off));
      console.log(`  one process, its rounds with sampling on ÷ its rounds with it off, concurrency ${r.concurrency}: ${lib.fixed(r.serverCpuUsPerCall / off.serverCpuUsPerCall, 2)}x (by round: median ${lib.fixed(s.median, 2)}x, middle half ${lib.fixed(s.low, 2)}-${lib.fixed(s.high, 2)}x): the cost of tracing itself, without the luck of two processes; what tracing leaves behind in the process (code, feedback, heap) is in both`);
    }
    const counts = await sink.counts();
    console.log(`  the OTLP sink (its own process) received ${counts.requests} export requests, ${(counts.bytes / 1e6).toFixed(1)} MB of spans (3 spans per Dispatch)`);
    if (counts.requests === 0) throw new Error('no spans reached the OTLP sink: trace export did not run');
    const verdicts = rows
      .filter((r) => r.kind === 'on')
      .map((r) => lib.verdict(`server CPU/call with trace export on vs off, concurrency ${r.concurrency}`, r.serverCpuUsPerCall / offAt(r).serverCpuUsPerCall, TARGET_RATIO, lib.roundRatios(r, offAt(r))));
    return { rows, verdicts };
  } finally {
    offClient.close();
    onClient.close();
    sampledClient.close();
    meteredClient.close();
    switchedClient.close();
    await Promise.all([off.stop(), on.stop(), sampled.stop(), metered.stop(), switched.stop()]);
    await sink.close();
  }
}

module.exports = { run, start, onMessage };

if (require.main === module && process.argv[2] === '--sink') {
  serveSink();
} else if (require.main === module) {
  run().then(
    ({ verdicts }) => process.exit(verdicts.every((v) => v.ok) ? 0 : 1),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
