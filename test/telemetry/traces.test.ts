import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import { SHUTDOWN_FLUSH_MS } from '../../src/telemetry/span-batcher';
import { createDispatchClient } from '../../src/client';
import { startApp } from '../helpers/servers';
import { tapEvents, turnEnded } from '../events/event-tap';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver';
import { CALLER_SPAN, expectTurnSpans, startTracedDaemon, startTracedTools, TRACED_TURN, tracedToolsYaml, traceparentOf, type TracedTools } from './traced-service';

let traced: TracedTools;
let receiver: OtlpReceiver;

const daemon = (env: NodeJS.ProcessEnv) => startTracedDaemon(traced.configFile, env);

/** The deaf collector's case (below), begun in beforeAll: it mostly waits out the daemon's shutdown bound. */
let deafCollector: Promise<DeafCollectorOutcome>;

beforeAll(async () => {
  traced = await startTracedTools();
  receiver = await startOtlpReceiver();
  deafCollector = againstDeafCollector();
  deafCollector.catch(() => undefined);
});
afterAll(async () => {
  await deafCollector?.catch(() => undefined);
  await traced.close();
  await receiver.close();
});

// A turn watched by a subscriber goes through the full observer, an unwatched one through the
// lean observer: both must make the same spans.
test.each([
  ['watched by a subscriber', true, '4bf92f3577b34da6a3ce929d0e0e4736'],
  ['watched by no one', false, '5cf92f3577b34da6a3ce929d0e0e4737'],
])('spans reach a real OTLP receiver, parented under the caller’s traceparent, with the GenAI and dispatch attributes (%s)', async (_label, watched, CALLER_TRACE) => {
  const toolRequestsBefore = traced.server.received.length;
  const server = await daemon({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_SERVICE_NAME: 'dispatch-under-test' });
  const client = createDispatchClient(server.address);
  const tap = watched ? await tapEvents(server.address, { sessionId: 'traced' }) : undefined;
  try {
    await client.dispatch(TRACED_TURN, { metadata: { traceparent: traceparentOf(CALLER_TRACE) } });
    await receiver.waitFor((spans) => spans.filter((s) => s.traceId === CALLER_TRACE).length === 6);
    await tap?.waitFor(turnEnded('traced'));
  } finally {
    tap?.close();
    client.close();
    await server.stop();
  }
  const { turn, weather, weatherAttempt } = expectTurnSpans(receiver.spans.filter((s) => s.traceId === CALLER_TRACE));
  expect(turn.resource['service.name']).toBe('dispatch-under-test');

  // The HTTP tools received the attempt span's context; events carry the very same ids.
  const weatherRequest = traced.server.received.slice(toolRequestsBefore).find((r) => r.path === '/weather')!;
  expect(weatherRequest.headers.traceparent).toBe(`00-${CALLER_TRACE}-${weatherAttempt.spanId}-01`);
  if (!tap) return;
  const events = tap.events;
  const pre = events.find((e) => e.kind === EventKind.TOOL_PRE && e.toolCallId === 'w1')!;
  expect(pre).toMatchObject({ traceId: CALLER_TRACE, spanId: weatherAttempt.spanId, parentSpanId: weather.spanId });
  expect(events.find((e) => e.kind === EventKind.TURN_END)).toMatchObject({ spanId: turn.spanId, parentSpanId: CALLER_SPAN });
});

test('shutdown flushes spans still waiting in the batch processor', async () => {
  const server = await daemon({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '60000' });
  const client = createDispatchClient(server.address);
  const trace = 'aaaabbbbccccddddeeeeffff00001111';
  await client.dispatch({ sessionId: 'flush', calls: [{ id: 'w1', name: 'weather', arguments: '{}' }] }, { metadata: { traceparent: `00-${trace}-1111222233334444-01` } });
  await new Promise((r) => setTimeout(r, 200));
  expect(receiver.spans.filter((s) => s.traceId === trace)).toHaveLength(0);
  client.close();
  await server.stop();
  expect(receiver.spans.filter((s) => s.traceId === trace).map((s) => s.name).sort()).toEqual(['dispatch.v1.DispatchService/Dispatch', 'execute_tool weather', 'tool_attempt weather']);
});

interface DeafCollectorOutcome {
  /** When the collector got each request, by the time it was awaited (before the daemon was stopped). */
  readonly received: number[];
  /** How long the daemon took to stop after SIGTERM. */
  readonly stopMs: number;
  readonly stderr: string;
}

/**
 * A daemon exporting to a collector that takes requests and never answers, stopped once the
 * collector has its first request. It has its own tool server (and config) and collector: the
 * other tests' daemons run meanwhile, and neither sees the other's requests or spans.
 */
async function againstDeafCollector(): Promise<DeafCollectorOutcome> {
  const received: number[] = [];
  const sockets = new Set<Socket>();
  const collector = createServer(() => void received.push(Date.now()));
  collector.on('connection', (socket) => sockets.add(socket));
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  const tools = await startTracedTools();
  try {
    const server = await startTracedDaemon(tools.configFile, {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}/v1/traces`,
      // One export, retries included, could take 30 s: past Kubernetes' default grace period.
      OTEL_EXPORTER_OTLP_TIMEOUT: '30000',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    });
    const client = createDispatchClient(server.address);
    let stopped = 0;
    let seen: number[] = [];
    try {
      await client.dispatch({ sessionId: 'deaf-collector', calls: [{ id: 'w1', name: 'weather', arguments: '{}' }] });
      const deadline = Date.now() + 10_000;
      while (received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      seen = [...received];
    } finally {
      client.close();
      stopped = Date.now();
      await server.stop();
    }
    return { received: seen, stopMs: Date.now() - stopped, stderr: server.d.stderr() };
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => collector.close(resolve));
    await tools.close();
  }
}

test('a collector that takes requests and never answers does not hold SIGTERM past the shutdown bound (OTLP/HTTP cannot cut its retries)', async () => {
  const { received, stopMs, stderr } = await deafCollector;
  expect(received).toHaveLength(1);
  // SHUTDOWN_FLUSH_MS (5 s) and the rest of the shutdown.
  expect(stopMs).toBeLessThan(SHUTDOWN_FLUSH_MS + 2_000);
  expect(stderr).toContain('trace export did not finish at shutdown; the spans not exported by then are lost');
  expect(stderr).toContain('the trace exporter did not close at shutdown; stopping without it');
}, 20_000);

test('with no OTEL_* variables nothing is exported, yet the caller’s trace still reaches the tools', async () => {
  const requestsBefore = receiver.requests;
  const d = await startApp(tracedToolsYaml(traced.server.url));
  const trace = '0123456789abcdef0123456789abcdef';
  try {
    await d.dispatch.dispatch({ sessionId: 'untraced', calls: [{ id: 'w1', name: 'weather', arguments: '{}' }] }, { metadata: { traceparent: `00-${trace}-1111222233334444-01` } });
  } finally {
    await d.close();
  }
  expect(receiver.requests).toBe(requestsBefore);
  const header = String(traced.server.received.at(-1)!.headers.traceparent);
  // No span of ours is exported: the caller's span is the tool's parent.
  expect(header).toBe(`00-${trace}-1111222233334444-01`);
});

test('a caller’s unsampled trace makes no spans, yet its trace id reaches the tools, unsampled', async () => {
  const server = await daemon({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50' });
  const client = createDispatchClient(server.address);
  const unsampled = '99998888777766665555444433332222';
  const sampled = '11112222333344445555666677778888';
  try {
    await client.dispatch({ sessionId: 'unsampled', calls: [{ id: 'w1', name: 'weather', arguments: '{}' }] }, { metadata: { traceparent: `00-${unsampled}-1111222233334444-00` } });
    const header = String(traced.server.received.at(-1)!.headers.traceparent);
    expect(header).toMatch(new RegExp(`^00-${unsampled}-[0-9a-f]{16}-00$`));
    expect(header).not.toContain('1111222233334444');
    // A sampled turn after it is exported, so the export works and the first one was skipped.
    await client.dispatch({ sessionId: 'unsampled', calls: [{ id: 'w2', name: 'weather', arguments: '{}' }] }, { metadata: { traceparent: `00-${sampled}-1111222233334444-01` } });
    await receiver.waitFor((spans) => spans.filter((s) => s.traceId === sampled).length === 3);
  } finally {
    client.close();
    await server.stop();
  }
  expect(receiver.spans.filter((s) => s.traceId === unsampled)).toHaveLength(0);
});
