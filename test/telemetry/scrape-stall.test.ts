import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import type { CallSummary } from '../../src/events';
import { SILENT_LOGGER } from '../../src/log';
import { startMetrics } from '../../src/telemetry/create-metrics';
import { createToolStats } from '../../src/telemetry/tool-stats';
import { scrapeOnce } from './metrics-app';

// At the label cap (two tenants with 600 tools each, long names: a 10.6 MB scrape) a scrape
// blocked the event loop 100-280 ms in one piece: each slice's text was encoded after its 5 ms,
// the slices were joined with one Buffer.concat, the rate and breaker gauges were written at once
// and the 10 MB went to the socket in one end(). A 30 ms tool with a 120 ms timeout got TIMEOUT.
// And the endpoint, unauthenticated, was held by eight half-sent requests: no scrape got in.

const OUTCOMES = ['ok', 'TIMEOUT', 'TOOL_ERROR', 'UNAVAILABLE', 'INVALID_ARGUMENTS'];
const summary = (tenant: string, tool: string, outcome: string): CallSummary => ({ tenant, tool, known: true, outcome, attempts: 1, durationMs: 12, validationFailed: false, timedOut: false, retried: false, idempotentHit: false, bounded: false, unexpected: false });

/** `count` concurrent GETs of /metrics from a worker thread (the scrapers' reading is not in the event loop measured), answering their sizes. */
const WORKER = `
const { request } = require('node:http');
const { workerData, parentPort } = require('node:worker_threads');
const one = () => new Promise((resolve, reject) => {
  const req = request({ host: '127.0.0.1', port: workerData.port, path: '/metrics', agent: false }, (res) => {
    let bytes = 0;
    res.on('data', (chunk) => (bytes += chunk.length));
    res.on('end', () => (res.statusCode === 200 ? resolve(bytes) : reject(new Error('status ' + res.statusCode))));
  });
  req.on('error', reject);
  req.end();
});
Promise.all(Array.from({ length: workerData.count }, one)).then((sizes) => parentPort.postMessage(sizes), (error) => parentPort.postMessage(String(error)));
`;

const scrapesInWorker = (port: number, count: number) =>
  new Promise<number[]>((resolve, reject) => {
    const worker = new Worker(WORKER, { eval: true, workerData: { port, count } });
    worker.once('message', (answer: number[] | string) => {
      void worker.terminate();
      if (Array.isArray(answer)) resolve(answer);
      else reject(new Error(answer));
    });
    worker.once('error', reject);
  });

/** The longest the event loop was held, in milliseconds, while four scrapes ran at once; their sizes. */
async function longestStall(port: number): Promise<{ stallMs: number; sizes: number[] }> {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  try {
    const sizes = await scrapesInWorker(port, 4);
    return { stallMs: Math.round(delay.max / 1e6), sizes };
  } finally {
    delay.disable();
  }
}

test('four concurrent scrapes at the label cap never hold the event loop past 50 ms (100-280 ms at once before)', async () => {
  const stats = createToolStats();
  const breakers = new Map<string, string>();
  const metrics = await startMetrics({ listen: '127.0.0.1:0', stats, breakerStates: () => breakers, subscribers: () => 0, logger: SILENT_LOGGER });
  try {
    for (const tenant of ['acme', 'globex']) {
      for (let i = 0; i < 600; i++) {
        const tool = `${tenant}_${'x'.repeat(100)}_${i}`;
        breakers.set(`${tenant}/${tool}`, i % 3 === 0 ? 'open' : 'closed');
        for (const outcome of OUTCOMES) {
          const s = summary(tenant, tool, outcome);
          metrics.recordCall(s);
          stats.record(s);
        }
      }
    }
    expect((await scrapesInWorker(metrics.port, 1))[0]).toBeGreaterThan(8_000_000);
    // The blocking was in every rendering; a machine shared with other work also stalls the loop
    // now and then, so the best of up to five rounds is taken. 50 ms leaves room over the 5 ms slices.
    const stalls: number[] = [];
    for (let round = 0; round < 5 && !stalls.some((ms) => ms < 50); round++) {
      const { stallMs, sizes } = await longestStall(metrics.port);
      expect(new Set(sizes).size).toBe(1);
      stalls.push(stallMs);
    }
    expect({ stalls, best: Math.min(...stalls) < 50 }).toEqual({ stalls, best: true });
  } finally {
    await metrics.shutdown();
  }
}, 60_000);

test('scrapes get in while eight half-sent requests are held open and reopened as they are closed', async () => {
  const metrics = await startMetrics({ listen: '127.0.0.1:0', stats: createToolStats(), breakerStates: () => new Map(), subscribers: () => 0, logger: SILENT_LOGGER });
  const held = new Set<Socket>();
  let holding = true;
  const hold = () => {
    if (!holding) return;
    const socket = connect(metrics.port, '127.0.0.1', () => socket.write('GET /metrics HTTP/1.1\r\nHost: x\r\n'));
    held.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      held.delete(socket);
      setTimeout(hold, 1);
    });
  };
  try {
    for (let i = 0; i < 8; i++) hold();
    await new Promise((r) => setTimeout(r, 300));
    let served = 0;
    for (let i = 0; i < 5; i++) {
      served += await scrapeOnce(metrics.port).then(
        () => 1,
        () => 0,
      );
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(served).toBe(5);
  } finally {
    holding = false;
    for (const socket of held) socket.destroy();
    await metrics.shutdown();
  }
}, 30_000);
