import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLOSE_BUDGET_MS } from '../../src/app';
import { startDaemon } from '../helpers/daemon';
import { dispatchctlAt } from '../helpers/dispatchctl';
import { startRedis, type TestRedis } from '../helpers/redis-server';

// A node cut off from the network: Redis stalled (SIGSTOP) and a trace collector that takes the
// connection and never answers. dispatchd's close after the drain must stay within the budget the
// Helm chart gives it (dispatch.shutdownCloseSeconds), or the kubelet kills it first. Its steps
// (trace flush, tool stats, store, relays) used to run one after the other: 11 s from SIGTERM.

jest.setTimeout(40_000);

/** The chart's seconds for the closing after the drain, read from its template. */
const CHART_CLOSE_S = Number(/define "dispatch\.shutdownCloseSeconds" -}}\s*(\d+)/.exec(readFileSync(join(__dirname, '..', '..', 'helm', 'dispatch', 'templates', '_helpers.tpl'), 'utf8'))?.[1]);

let redis: TestRedis;
let collector: Server;
const held: IncomingMessage[] = [];
beforeAll(async () => {
  redis = await startRedis({ own: true });
  // Reads each export request and never answers it.
  collector = createServer((req) => void held.push(req.resume()));
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  redis?.signal('SIGCONT');
  collector?.closeAllConnections();
  await new Promise((resolve) => collector?.close(resolve));
  await redis?.close();
});

test('with Redis stalled and the collector silent, dispatchd exits within the chart’s closing budget after SIGTERM', async () => {
  expect(CHART_CLOSE_S * 1000).toBeGreaterThanOrEqual(CLOSE_BUDGET_MS);
  const collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  // Spans wait for the shutdown's flush: the schedule delay is longer than the test.
  const daemon = await startDaemon(['--redis', redis.url, '--grace', '1000'], { OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl, OTEL_BSP_SCHEDULE_DELAY: '100000' });
  try {
    const ctl = dispatchctlAt(() => `127.0.0.1:${daemon.port}`);
    for (const session of ['s1', 's2', 's3']) expect((await ctl('--session', session, 'call', 'echo', '{"a":1}')).code).toBe(0);
    redis.signal('SIGSTOP');
    const started = Date.now();
    daemon.child.kill('SIGTERM');
    const code = await daemon.exited;
    const took = Date.now() - started;
    expect(code).toBe(0);
    // What it could not send while cut off is said, not waited for.
    expect(daemon.stderr()).toContain('shared tool stats: closed with counts redis never received');
    expect(daemon.stderr()).toContain('trace export did not finish at shutdown');
    expect(held.length).toBeGreaterThan(0);
    expect(took).toBeLessThan(CHART_CLOSE_S * 1000);
  } finally {
    redis.signal('SIGCONT');
    daemon.child.kill('SIGKILL');
  }
});
