'use strict';
// Child-process entry of a benchmarked server: `node server-child.js RECIPE OPTIONS_JSON`.
// Starts the server the recipe module describes, tells the parent its port, and answers
// `cpu` requests with this process's cpuUsage, so the parent can read the server's CPU time
// without the client's, and `request`s with what the recipe's `onMessage(value)` returns.
// Exits on `stop` or when the parent goes away.

const { writeFileSync } = require('node:fs');
const inspector = require('node:inspector');

const recipe = require(process.argv[2]);
const options = JSON.parse(process.argv[3] || '{}');
// With BENCH_PROFILE_FILE set, the CPU profile covers the measurements only: it starts at the
// first cpu request (after warmup) and is written on stop.
const profileFile = process.env.BENCH_PROFILE_FILE;
let profiling;

function post(session, method, params) {
  return new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
}

async function startProfile() {
  const session = new inspector.Session();
  session.connect();
  await post(session, 'Profiler.enable');
  await post(session, 'Profiler.setSamplingInterval', { interval: 200 });
  await post(session, 'Profiler.start');
  return session;
}

async function writeProfile() {
  if (!profiling) return;
  const session = await profiling;
  const { profile } = await post(session, 'Profiler.stop');
  writeFileSync(profileFile, JSON.stringify(profile));
}

async function main() {
  const server = await recipe.start(options);
  process.on('message', async (message) => {
    if (message.type === 'cpu') {
      if (profileFile && !profiling) profiling = startProfile();
      const usage = process.cpuUsage();
      process.send({ type: 'cpu', id: message.id, user: usage.user, system: usage.system, rss: process.memoryUsage().rss });
    } else if (message.type === 'request') {
      process.send({ type: 'reply', id: message.id, value: await recipe.onMessage?.(message.value) });
    } else if (message.type === 'stop') {
      await writeProfile().catch((error) => console.error(`profile not written: ${error.message}`));
      await server.close().catch(() => undefined);
      process.exit(0);
    }
  });
  process.on('disconnect', () => process.exit(0));
  process.send({ type: 'ready', port: server.port, ports: server.ports });
}

main().catch((error) => {
  process.send?.({ type: 'error', message: error && error.stack ? error.stack : String(error) });
  process.exit(1);
});
