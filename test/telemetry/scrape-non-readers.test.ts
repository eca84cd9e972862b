import * as http from 'node:http';
import * as net from 'node:net';
import { SILENT_LOGGER } from '../../src/log';
import { startMetrics } from '../../src/telemetry/create-metrics';
import { createToolStats } from '../../src/telemetry/tool-stats';

// Clients that ask for /metrics and never read their answer held the connection limit's eight
// places until the 30 s send timeout, so every scrape meanwhile was refused, and reopening them
// kept it so (found in a review). An answer whose client has left its socket full for 2 s gives
// way to a new connection past the limit, as an idle or half-sent one does.

jest.setTimeout(40_000);

const OUTCOMES = ['ok', 'TIMEOUT', 'TOOL_ERROR', 'UNAVAILABLE', 'INVALID_ARGUMENTS'];
const summary = (tenant: string, tool: string, outcome: string) => ({ tenant, tool, known: true, outcome, attempts: 1, durationMs: 12, validationFailed: false, timedOut: false, retried: false, idempotentHit: false, bounded: false, unexpected: false });

const scrape = (port: number) =>
  new Promise<number>((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path: '/metrics', agent: false }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => (bytes += chunk.length));
      response.on('end', () => resolve(response.statusCode === 200 && bytes === Number(response.headers['content-length']) ? bytes : -1));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.setTimeout(10_000, () => request.destroy(new Error('client timeout')));
    request.end();
  });

test('eight clients that ask and never read do not keep a scrape out', async () => {
  const stats = createToolStats();
  const metrics = await startMetrics({ listen: '127.0.0.1:0', stats, breakerStates: () => new Map(), subscribers: () => 0, logger: SILENT_LOGGER });
  const held: net.Socket[] = [];
  try {
    // Several MB of series: more than the kernel's socket buffers hold for a client that does not read.
    for (const tenant of ['acme', 'globex'])
      for (let i = 0; i < 600; i++) for (const outcome of OUTCOMES) metrics.recordCall(summary(tenant, `${tenant}_${'x'.repeat(100)}_${i}`, outcome) as never);
    const whole = await scrape(metrics.port);
    expect(whole).toBeGreaterThan(2_000_000);
    for (let i = 0; i < 8; i++) {
      held.push(
        await new Promise<net.Socket>((resolve) => {
          const socket = net.connect(metrics.port, '127.0.0.1', () => {
            socket.write('GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n');
            socket.pause();
            resolve(socket);
          });
          socket.on('error', () => undefined);
        }),
      );
    }
    await new Promise((r) => setTimeout(r, 3_000));
    await expect(scrape(metrics.port)).resolves.toBe(whole);
  } finally {
    for (const socket of held) socket.destroy();
    await metrics.shutdown();
  }
});
