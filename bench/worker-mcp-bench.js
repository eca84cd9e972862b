'use strict';
// Issue 7's benchmark: at the same concurrency, in one run, Dispatch of an echo tool hosted by a
// worker over WorkerService.Work (client -> dispatchd -> worker process and back) vs the same echo
// as an MCP tool called directly with the MCP TypeScript SDK over Streamable HTTP (client -> MCP
// server). Target: the worker path carries at least 3x the MCP calls/s. Both sides' CPU per call
// is reported: the client's (this process), and each server process's (dispatchd and the worker;
// the MCP server), read with process.cpuUsage in that process.
//
// This module is also the recipe of its server children (`start(options)`, see bench/lib).
const path = require('node:path');
const lib = require('./lib');

const dist = path.join(__dirname, '..', 'dist');
/** Callers in flight, the same for both paths. */
const CONCURRENCY = [1, 32];
/** Target: worker-path calls/s over MCP calls/s, at least. */
const TARGET_SPEEDUP = 3;
const TOOL = 'bench_echo';

/** The server children: role `dispatch` (the whole app), `worker` (hosts bench_echo) or `mcp`. */
async function start(options) {
  if (options.role === 'dispatch') return require(lib.RECIPES.dispatchApp).start({ configYaml: 'tools: []' });
  if (options.role === 'worker') return startWorker(options.address);
  if (options.role === 'mcp') return startMcpServer();
  throw new Error(`unknown role ${options.role}`);
}

function startWorker(address) {
  const { create } = require('@bufbuild/protobuf');
  const { createWorkerClient } = require(path.join(dist, 'src', 'client'));
  const { WorkerMessageSchema } = require(path.join(dist, 'gen', 'dispatch', 'v1', 'worker_pb.js'));
  const { Effect } = require(path.join(dist, 'gen', 'dispatch', 'v1', 'tool_pb.js'));
  const client = createWorkerClient(address);
  const stream = client.work();
  stream.on('error', () => undefined);
  stream.on('data', (assignment) => {
    if (assignment.cancel) return;
    stream.write(create(WorkerMessageSchema, { msg: { case: 'completion', value: { assignmentId: assignment.assignmentId, output: assignment.call.arguments } } }));
  });
  const hello = { workerId: 'bench', tools: [{ name: TOOL, inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY, concurrencySafe: true }] };
  stream.write(create(WorkerMessageSchema, { msg: { case: 'hello', value: hello } }));
  const heartbeat = setInterval(() => stream.write(create(WorkerMessageSchema, { msg: { case: 'heartbeat', value: {} } })), 2_000);
  return { port: 0, close: async () => (clearInterval(heartbeat), stream.end(), client.close()) };
}

/** An MCP server whose sessions answer as SSE streams (the SDK default) on /sse, or JSON on /json. */
async function startMcpServer() {
  const { randomUUID } = require('node:crypto');
  const http = require('node:http');
  const { Server } = require('@modelcontextprotocol/sdk/server/index.js');
  const { StreamableHTTPServerTransport } = require('@modelcontextprotocol/sdk/server/streamableHttp.js');
  const { CallToolRequestSchema, ListToolsRequestSchema } = require('@modelcontextprotocol/sdk/types.js');
  const sessions = new Map();
  const newServer = () => {
    const server = new Server({ name: 'bench', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: 'echo', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }] }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => ({ content: [{ type: 'text', text: JSON.stringify(request.params.arguments ?? {}) }] }));
    return server;
  };
  const httpServer = http.createServer(async (req, res) => {
    const id = req.headers['mcp-session-id'];
    let transport = id === undefined ? undefined : sessions.get(id);
    if (!transport) {
      const enableJsonResponse = req.url.startsWith('/json');
      transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), enableJsonResponse, onsessioninitialized: (sid) => sessions.set(sid, transport) });
      await newServer().connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  httpServer.keepAliveTimeout = 60_000;
  await new Promise((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  return { port: httpServer.address().port, close: () => new Promise((resolve) => (httpServer.closeAllConnections(), httpServer.close(() => resolve()))) };
}

/**
 * A stand-in for measureAll's `server`: its cpu() reads every process of one path (the client in
 * this process too) and sums the server side; the per-process deltas of each measured round (reads
 * come in before/after pairs) are added to `totals`.
 */
function trackedCpu(processes) {
  const totals = Object.fromEntries(Object.keys(processes).map((name) => [name, 0]));
  let before;
  return {
    totals,
    async cpu() {
      const reading = {};
      for (const [name, p] of Object.entries(processes)) {
        if (p === 'client') {
          const usage = process.cpuUsage();
          reading[name] = usage.user + usage.system;
        } else reading[name] = (await p.cpu()).total;
      }
      if (before) {
        for (const name of Object.keys(totals)) totals[name] += reading[name] - before[name];
        before = undefined;
      } else before = reading;
      return { total: Object.entries(reading).reduce((sum, [name, us]) => sum + (name === 'client' ? 0 : us), 0) };
    },
  };
}

/**
 * A direct MCP SDK client. Its transport gets dispatch's per-request-signal fetch, as dispatch's own
 * MCP connections do: with Node's default fetch, every request leaves an abort listener on the
 * transport's one AbortSignal until it is garbage collected (nodejs/undici#3157), thousands at
 * concurrency 32, each drawing a MaxListenersExceededWarning. Measured against the default fetch,
 * the wrapper was not slower: the pile-up of listeners cost more than it does.
 */
async function connectMcp(port, mode) {
  const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const { createRequestScopedFetch } = require(path.join(dist, 'src', 'executors', 'mcp'));
  const client = new Client({ name: 'bench', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/${mode}`), { fetch: createRequestScopedFetch() }));
  return client;
}

async function run(options = {}) {
  const self = require.resolve('./worker-mcp-bench.js');
  const dispatchd = await lib.startServerProcess(self, { role: 'dispatch' }, { profileFile: options.profileDir && path.join(options.profileDir, 'dispatch-app.cpuprofile') });
  const worker = await lib.startServerProcess(self, { role: 'worker', address: dispatchd.address });
  const mcpServer = await lib.startServerProcess(self, { role: 'mcp' });
  const dispatchClient = lib.createRawClient(dispatchd.address);
  const mcp = await connectMcp(mcpServer.port, 'sse');
  const mcpJson = await connectMcp(mcpServer.port, 'json');
  const requests = lib.dispatchRequests({ calls: 1, tool: TOOL });
  let n = 0;
  try {
    const until = Date.now() + 10_000;
    let answer;
    do {
      answer = lib.decodeResponse(await dispatchClient.unary(lib.DISPATCH_PATH, requests.next())).results[0];
      if (answer.isError) await new Promise((r) => setTimeout(r, 50));
    } while (answer.isError && Date.now() < until);
    if (answer.isError) throw new Error(`Dispatch of the worker's echo failed: ${answer.output}`);
    const mcpAnswer = await mcp.callTool({ name: 'echo', arguments: { text: 'hello, dispatch', n: 0 } });
    console.log(`worker path answers e.g. ${answer.output}; MCP answers e.g. ${mcpAnswer.content[0].text}`);
    const loads = CONCURRENCY.flatMap((concurrency) => {
      const viaWorker = trackedCpu({ client: 'client', dispatchd, worker });
      const direct = trackedCpu({ client: 'client', 'MCP server': mcpServer });
      const directJson = trackedCpu({ client: 'client', 'MCP server': mcpServer });
      return [
        { label: 'Dispatch -> worker stream', kind: 'worker', concurrency, server: viaWorker, cpu: viaWorker, call: () => dispatchClient.unary(lib.DISPATCH_PATH, requests.next()) },
        { label: 'MCP SDK -> Streamable HTTP (SSE answers, SDK default)', kind: 'mcp', concurrency, server: direct, cpu: direct, call: () => mcp.callTool({ name: 'echo', arguments: { text: 'hello, dispatch', n: ++n } }) },
        { label: 'MCP SDK -> Streamable HTTP (JSON answers)', kind: 'mcp-json', concurrency, server: directJson, cpu: directJson, call: () => mcpJson.callTool({ name: 'echo', arguments: { text: 'hello, dispatch', n: ++n } }) },
      ];
    });
    const measured = await lib.measureAll(loads, options);
    const rows = measured.map((row, i) => ({ ...row, cpu: loads[i].cpu.totals }));
    const perCall = (row, name) => (row.cpu[name] ?? NaN) / Math.max(1, row.calls);
    const mcpAt = (row, kind = 'mcp') => rows.find((r) => r.kind === kind && r.concurrency === row.concurrency);
    lib.table('worker-mcp: echo hosted by a worker stream, through Dispatch, vs the same echo as an MCP tool called directly (CPU in µs per call)', rows, [
      { label: 'measurement', format: (r) => r.label },
      { label: 'conc', format: (r) => String(r.concurrency) },
      { label: 'calls/s', format: (r) => lib.fixed(r.callsPerSec, 0) },
      { label: 'p50 ms', format: (r) => lib.fixed(r.p50Ms, 2) },
      { label: 'p99 ms', format: (r) => lib.fixed(r.p99Ms, 2) },
      { label: 'client CPU', format: (r) => lib.fixed(perCall(r, 'client'), 1) },
      { label: 'dispatchd CPU', format: (r) => lib.fixed(perCall(r, 'dispatchd'), 1) },
      { label: 'worker CPU', format: (r) => lib.fixed(perCall(r, 'worker'), 1) },
      { label: 'MCP server CPU', format: (r) => lib.fixed(perCall(r, 'MCP server'), 1) },
      { label: 'all CPU', format: (r) => lib.fixed(Object.values(r.cpu).reduce((a, b) => a + b, 0) / Math.max(1, r.calls), 1) },
      { label: 'calls/s ÷ MCP', format: (r) => lib.fixed(r.callsPerSec / mcpAt(r).callsPerSec, 2) },
      { label: 'errors', format: (r) => String(r.errors) },
    ]);
    const verdicts = rows
      .filter((r) => r.kind === 'worker')
      .map((r) => {
        const speedup = r.callsPerSec / mcpAt(r).callsPerSec;
        const overJson = r.callsPerSec / mcpAt(r, 'mcp-json').callsPerSec;
        console.log(`  concurrency ${r.concurrency}: the worker path carries ${lib.fixed(speedup, 2)}x the calls/s of MCP with the SDK defaults (target >= ${TARGET_SPEEDUP}x), ${lib.fixed(overJson, 2)}x MCP with JSON answers`);
        return lib.verdict(`MCP calls/s ÷ worker-stream Dispatch calls/s, concurrency ${r.concurrency}`, 1 / speedup, Number((1 / TARGET_SPEEDUP).toFixed(3)), lib.roundRatios(mcpAt(r), r, 'rate'));
      });
    return { rows, verdicts };
  } finally {
    dispatchClient.close();
    await mcp.close().catch(() => undefined);
    await mcpJson.close().catch(() => undefined);
    await worker.stop();
    await Promise.all([dispatchd.stop(), mcpServer.stop()]);
  }
}

module.exports = { run, start };

if (require.main === module) {
  run().then(
    () => process.exit(0),
    (error) => {
      console.error(error && error.stack ? error.stack : error);
      process.exit(1);
    },
  );
}
