'use strict';
// Issue 3's benchmark: the Redis store. Needs dist/ (`npx tsc -p .`) and redis-server on the PATH,
// or REDIS_URL naming a Redis this may use. `node bench/redis-bench.js` runs it alone.
//
// - Redis round trips per call, read from Redis itself, for a read-only and a side-effecting call
//   (target <= 2 each): the commands the calls' connection sent, seen through MONITOR (the
//   server's periodic commands, on its other connections and its subscribers' probes, are shown
//   apart, per second), and
//   EVAL/EVALSHA from INFO commandstats (whose total also counts the commands the scripts run
//   inside Redis, and the periodic ones; those are not round trips of a call).
// - Server CPU per call of Dispatch with the Redis store against the bare grpc-js echo of the same
//   request bytes (target <= 2x), at concurrency 1 and 64; Dispatch with the in-memory store is
//   measured alongside, to show what Redis itself adds.
const { spawn } = require('node:child_process');
const { mkdtempSync, rmSync } = require('node:fs');
const net = require('node:net');
const { tmpdir } = require('node:os');
const path = require('node:path');
const lib = require('./lib');

/** Target: Dispatch with Redis, server CPU per call over the bare echo's. */
const CPU_TARGET = 2;
/** Target: Redis round trips per call. */
const ROUND_TRIP_TARGET = 2;
/** Calls whose Redis commands are counted, per kind of call. @default 500 */
const COUNTED_CALLS = 500;
const CONCURRENCY = [1, 64];

const TOOLS = `tools:
  - name: echo
    effect: read_only
    builtin: { name: echo }
  - name: record
    effect: side_effect
    builtin: { name: echo }
`;

/** Sends one command over a fresh socket; resolves with the raw reply once it is complete. */
function redisCommand(port, ...args) {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection({ host: '127.0.0.1', port }, () => socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`));
    let data = '';
    socket.setTimeout(5000, () => socket.destroy(new Error(`redis did not answer ${args[0]}`)));
    socket.on('data', (chunk) => {
      data += chunk.toString();
      const bulk = /^\$(\d+)\r\n/.exec(data);
      if (/^[+-]/.test(data) || (bulk && Buffer.byteLength(data) >= bulk[0].length + Number(bulk[1]) + 2)) {
        socket.destroy();
        resolve(data);
      }
    });
    socket.once('error', reject);
  });
}

async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A private redis-server without persistence, or the one REDIS_URL names. */
async function startRedis() {
  if (process.env.REDIS_URL) {
    const url = new URL(process.env.REDIS_URL);
    return { url: process.env.REDIS_URL, port: Number(url.port || 6379), stop: async () => undefined };
  }
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'dispatch-bench-redis-'));
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const stop = async () => {
    if (child.exitCode === null) await new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGKILL')));
    rmSync(dir, { recursive: true, force: true });
  };
  for (let i = 0; ; i++) {
    if (await redisCommand(port, 'PING').then((r) => r.startsWith('+PONG'), () => false)) break;
    if (i > 200) {
      await stop();
      throw new Error(`redis-server on port ${port} did not start`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url: `redis://127.0.0.1:${port}`, port, stop };
}

async function commandStats(port) {
  const stats = {};
  for (const m of (await redisCommand(port, 'INFO', 'commandstats')).matchAll(/cmdstat_([^:]+):calls=(\d+)/g)) stats[m[1]] = Number(m[2]);
  return stats;
}

/**
 * Counts the commands clients send while `body` runs, per client connection (MONITOR shows each
 * command with the connection's address, and script-run ones as `[db lua]`, not counted). The
 * probes pub/sub subscribers publish to themselves (one a second each, on `dispatch:probe:*`,
 * some through the store's connection) are counted apart, as `probes`: they are not a call's.
 */
async function countClientCommands(port, body) {
  const socket = net.createConnection({ host: '127.0.0.1', port });
  let buffer = '';
  const byConnection = new Map();
  let probes = 0;
  const watching = new Promise((resolve) => {
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      for (let nl = buffer.indexOf('\r\n'); nl >= 0; nl = buffer.indexOf('\r\n')) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 2);
        if (line === '+OK') resolve();
        const from = /^\+[\d.]+ \[\d+ (?!lua\])([^\]]+)\]/.exec(line)?.[1];
        if (from && /^[^"]*"publish" "dispatch:probe:/i.test(line)) probes++;
        else if (from) byConnection.set(from, (byConnection.get(from) ?? 0) + 1);
      }
    });
  });
  socket.write('MONITOR\r\n');
  await watching;
  const started = performance.now();
  await body();
  const seconds = (performance.now() - started) / 1000;
  await new Promise((resolve) => setTimeout(resolve, 200));
  socket.destroy();
  return { byConnection: [...byConnection.values()].sort((a, b) => b - a), probes, seconds };
}

/**
 * Redis commands per call of `call`, over COUNTED_CALLS calls with 8 in flight. The round trips
 * of the calls are the commands of the connection that carried them (the store's, the busiest by
 * far); the server sends periodic commands whatever the calls (GetToolStats' counts flushed
 * every second, worker routes refreshed, its subscribers' probes), reported apart, per second.
 */
async function redisCommandsPerCall(port, call) {
  const before = await commandStats(port);
  let left = COUNTED_CALLS;
  const worker = async () => {
    while (left-- > 0) await call();
  };
  const { byConnection, probes, seconds } = await countClientCommands(port, () => Promise.all(Array.from({ length: 8 }, worker)));
  const after = await commandStats(port);
  const diff = (name) => (after[name] ?? 0) - (before[name] ?? 0);
  const inside = Object.keys(after).filter((k) => k !== 'info' && k !== 'monitor').reduce((sum, k) => sum + diff(k), 0);
  const [calls = 0, ...others] = byConnection;
  return {
    roundTrips: calls / COUNTED_CALLS,
    background: (others.reduce((sum, n) => sum + n, 0) + probes) / seconds,
    evalsha: (diff('evalsha') + diff('eval')) / COUNTED_CALLS,
    allCommands: inside / COUNTED_CALLS,
  };
}

async function run(options = {}) {
  const redis = await startRedis();
  const servers = [];
  const clients = [];
  try {
    const bare = await lib.startServerProcess(lib.RECIPES.bareEcho);
    servers.push(bare);
    const withRedis = await lib.startServerProcess(lib.RECIPES.dispatchApp, { configYaml: TOOLS, redisUrl: redis.url }, { profileFile: options.profileDir && path.join(options.profileDir, 'dispatch-redis.cpuprofile') });
    servers.push(withRedis);
    const inMemory = await lib.startServerProcess(lib.RECIPES.dispatchApp, { configYaml: TOOLS });
    servers.push(inMemory);
    const [bareClient, redisClient, memoryClient] = [bare, withRedis, inMemory].map((s) => lib.createRawClient(s.address));
    clients.push(bareClient, redisClient, memoryClient);
    const requests = { echo: lib.dispatchRequests({ calls: 1, tool: 'echo' }), record: lib.dispatchRequests({ calls: 1, tool: 'record' }) };
    const dispatch = (client, tool) => async () => {
      const result = lib.decodeResponse(await client.unary(lib.DISPATCH_PATH, requests[tool].next())).results[0];
      if (!result || result.isError) throw new Error(`Dispatch of ${tool} failed: ${result ? result.output : 'no result'}`);
    };
    await dispatch(redisClient, 'record')();
    console.log(`request size ${requests.record.size} bytes (every server); Redis at ${redis.url}`);

    const counts = { readOnly: await redisCommandsPerCall(redis.port, dispatch(redisClient, 'echo')), sideEffect: await redisCommandsPerCall(redis.port, dispatch(redisClient, 'record')) };
    lib.table('redis: commands per call, from the Redis server (MONITOR and INFO commandstats)', Object.entries(counts), [
      { label: 'call', format: ([kind]) => (kind === 'readOnly' ? 'read-only (echo)' : 'side-effecting (record)') },
      { label: 'round trips/call', format: ([, c]) => lib.fixed(c.roundTrips, 2) },
      { label: 'EVALSHA/call', format: ([, c]) => lib.fixed(c.evalsha, 2) },
      { label: 'commands incl. inside scripts/call', format: ([, c]) => lib.fixed(c.allCommands, 1) },
      { label: 'periodic (other connections, probes), commands/s', format: ([, c]) => lib.fixed(c.background, 1) },
    ]);

    const loads = CONCURRENCY.flatMap((concurrency) => [
      { label: 'bare grpc-js echo', kind: 'bare', concurrency, server: bare, call: () => bareClient.unary(lib.ECHO_PATH, requests.record.next()) },
      { label: 'Dispatch read-only, Redis', kind: 'redis-ro', concurrency, server: withRedis, call: dispatch(redisClient, 'echo') },
      { label: 'Dispatch side-effecting, Redis', kind: 'redis-se', concurrency, server: withRedis, call: dispatch(redisClient, 'record') },
      { label: '  read-only, in-memory store', kind: 'memory-ro', concurrency, server: inMemory, call: dispatch(memoryClient, 'echo') },
      { label: '  side-effecting, in-memory store', kind: 'memory-se', concurrency, server: inMemory, call: dispatch(memoryClient, 'record') },
    ]);
    const rows = await lib.measureAll(loads, options);
    const bareAt = (row) => rows.find((r) => r.kind === 'bare' && r.concurrency === row.concurrency);
    lib.table('redis: bare grpc-js echo vs Dispatch with the Redis store (servers in child processes)', rows, lib.loadColumns(bareAt));

    // What Redis itself adds, per round trip: (Redis row - in-memory row) / round trips per call,
    // also in bare echo requests (at concurrency 1 each round trip costs the server a sleep and a
    // wake-up of its own, as a whole request does).
    for (const [redisKind, memoryKind, count] of [['redis-ro', 'memory-ro', counts.readOnly.roundTrips], ['redis-se', 'memory-se', counts.sideEffect.roundTrips]]) {
      for (const concurrency of CONCURRENCY) {
        const at = (kind) => rows.find((r) => r.kind === kind && r.concurrency === concurrency);
        const perTrip = (at(redisKind).serverCpuUsPerCall - at(memoryKind).serverCpuUsPerCall) / count;
        console.log(`  ${at(redisKind).label}, concurrency ${concurrency}: each Redis round trip adds ${lib.fixed(perTrip, 1)} µs of server CPU, ${lib.fixed(perTrip / at('bare').serverCpuUsPerCall, 2)}x a whole bare echo request`);
      }
    }

    const roundTrips = (name, value) => {
      const ok = value <= ROUND_TRIP_TARGET;
      console.log(`${ok ? 'MET ' : 'MISS'} ${name}: ${lib.fixed(value, 2)} (target <= ${ROUND_TRIP_TARGET})`);
      return { name, ratio: value, target: ROUND_TRIP_TARGET, ok };
    };
    const verdicts = [
      roundTrips('Redis round trips per read-only call', counts.readOnly.roundTrips),
      roundTrips('Redis round trips per side-effecting call', counts.sideEffect.roundTrips),
      ...rows
        .filter((r) => r.kind === 'redis-ro' || r.kind === 'redis-se')
        .map((r) => lib.verdict(`${r.label} server CPU/call vs bare echo, concurrency ${r.concurrency}`, r.serverCpuUsPerCall / bareAt(r).serverCpuUsPerCall, CPU_TARGET, lib.roundRatios(r, bareAt(r)))),
    ];
    return { rows, redisCommands: counts, verdicts };
  } finally {
    for (const c of clients) c.close();
    await Promise.all(servers.map((s) => s.stop()));
    await redis.stop();
  }
}

module.exports = { run };

if (require.main === module) {
  run().then(
    (result) => process.exit(result.verdicts.every((v) => v.ok) ? 0 : 1),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
