import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import { createDispatchClient } from '../../src/client';
import { startDaemon, type Daemon } from '../helpers/daemon';
import { startApp, startToolServer, json, type ToolServer } from '../helpers/servers';
import { tapEvents, turnEnded } from '../events/event-tap';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver';

const TOOLS = (url: string) => `
tools:
  - name: weather
    effect: read_only
    input_schema: '{"type":"object","properties":{"city":{"type":"string"}}}'
    http: { url: "${url}/weather" }
  - name: flaky
    effect: read_only
    input_schema: '{"type":"object"}'
    retry: { initial_backoff_ms: 5, max_backoff_ms: 10 }
    http: { url: "${url}/flaky" }
`;

const CALLER_SPAN = '00f067aa0ba902b7';

let tools: ToolServer;
let receiver: OtlpReceiver;
let flaky = 0;
let dir: string;
let configFile: string;

/**
 * Trace export runs in a real dispatchd process (the compiled bin, as deployed): the OTLP
 * exporter loads its HTTP transport with a dynamic import(), which jest's module sandbox refuses.
 */
async function daemon(env: NodeJS.ProcessEnv): Promise<{ d: Daemon; address: string; stop(): Promise<void> }> {
  const d = await startDaemon(['--config', configFile], env);
  return {
    d,
    address: `127.0.0.1:${d.port}`,
    async stop() {
      d.child.kill('SIGTERM');
      await d.exited;
    },
  };
}

beforeAll(async () => {
  tools = await startToolServer({
    '/weather': json({ temp: 20 }),
    '/flaky': (_req, res) => void (flaky++ % 2 === 0 ? res.writeHead(503).end('busy') : res.writeHead(200).end('"fine"')),
  });
  receiver = await startOtlpReceiver();
  dir = mkdtempSync(join(tmpdir(), 'dispatch-traces-'));
  configFile = join(dir, 'tools.yaml');
  writeFileSync(configFile, TOOLS(tools.url));
});
afterAll(async () => {
  await tools.close();
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

const named = (spans: ReceivedSpan[], name: string) => spans.filter((s) => s.name === name);

// A turn watched by a subscriber goes through the full observer, an unwatched one through the
// lean observer: both must make the same spans.
test.each([
  ['watched by a subscriber', true, '4bf92f3577b34da6a3ce929d0e0e4736'],
  ['watched by no one', false, '5cf92f3577b34da6a3ce929d0e0e4737'],
])('spans reach a real OTLP receiver, parented under the caller’s traceparent, with the GenAI and dispatch attributes (%s)', async (_label, watched, CALLER_TRACE) => {
  const TRACEPARENT = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;
  const toolRequestsBefore = tools.received.length;
  const server = await daemon({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_SERVICE_NAME: 'dispatch-under-test' });
  const client = createDispatchClient(server.address);
  const tap = watched ? await tapEvents(server.address, { sessionId: 'traced' }) : undefined;
  try {
    await client.dispatch(
      { sessionId: 'traced', calls: [{ id: 'w1', name: 'weather', arguments: '{"city":"Rome"}' }, { id: 'f1', name: 'flaky', arguments: '{}' }] },
      { metadata: { traceparent: TRACEPARENT } },
    );
    await receiver.waitFor((spans) => spans.filter((s) => s.traceId === CALLER_TRACE).length === 6);
    await tap?.waitFor(turnEnded('traced'));
  } finally {
    tap?.close();
    client.close();
    await server.stop();
  }
  const spans = receiver.spans.filter((s) => s.traceId === CALLER_TRACE);
  expect(spans).toHaveLength(6);
  const [turn] = named(spans, 'dispatch.v1.DispatchService/Dispatch');
  expect(turn).toBeDefined();
  expect(turn!.parentSpanId).toBe(CALLER_SPAN);
  expect(turn!.kind).toBe(2); // SERVER
  expect(turn!.attributes).toMatchObject({ 'dispatch.tenant': 'default', 'dispatch.session_id': 'traced', 'dispatch.calls': 2n });
  expect(turn!.resource['service.name']).toBe('dispatch-under-test');

  const [weather] = named(spans, 'execute_tool weather');
  expect(weather!.parentSpanId).toBe(turn!.spanId);
  expect(weather!.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'weather', 'gen_ai.tool.call.id': 'w1', 'dispatch.outcome': 'ok', 'dispatch.attempts': 1n });
  expect(weather!.endNs).toBeGreaterThanOrEqual(weather!.startNs);
  const [weatherAttempt] = named(spans, 'tool_attempt weather');
  expect(weatherAttempt!.parentSpanId).toBe(weather!.spanId);
  expect(weatherAttempt!.kind).toBe(3); // CLIENT
  expect(weatherAttempt!.attributes).toMatchObject({ 'dispatch.attempt': 1n, 'dispatch.effect': 'read_only', 'dispatch.outcome': 'ok', 'dispatch.replay': false, 'dispatch.cached': false, 'dispatch.truncated': false });
  expect(weatherAttempt!.attributes['error.type']).toBeUndefined();

  const [flakyCall] = named(spans, 'execute_tool flaky');
  const attempts = named(spans, 'tool_attempt flaky').sort((x, y) => Number(x.attributes['dispatch.attempt']) - Number(y.attributes['dispatch.attempt']));
  expect(attempts.map((s) => s.parentSpanId)).toEqual([flakyCall!.spanId, flakyCall!.spanId]);
  expect(attempts[0]!.attributes).toMatchObject({ 'dispatch.attempt': 1n, 'dispatch.outcome': 'TOOL_ERROR', 'error.type': 'TOOL_ERROR' });
  expect(attempts[0]!.status.code).toBe(2); // ERROR
  expect(attempts[1]!.attributes).toMatchObject({ 'dispatch.attempt': 2n, 'dispatch.outcome': 'ok' });
  expect(flakyCall!.events.map((e) => e.name)).toEqual(['retry']);
  expect(flakyCall!.attributes).toMatchObject({ 'dispatch.attempts': 2n, 'dispatch.outcome': 'ok' });

  // The HTTP tools received the attempt span's context; events carry the very same ids.
  const weatherRequest = tools.received.slice(toolRequestsBefore).find((r) => r.path === '/weather')!;
  expect(weatherRequest.headers.traceparent).toBe(`00-${CALLER_TRACE}-${weatherAttempt!.spanId}-01`);
  if (!tap) return;
  const events = tap.events;
  const pre = events.find((e) => e.kind === EventKind.TOOL_PRE && e.toolCallId === 'w1')!;
  expect(pre).toMatchObject({ traceId: CALLER_TRACE, spanId: weatherAttempt!.spanId, parentSpanId: weather!.spanId });
  expect(events.find((e) => e.kind === EventKind.TURN_END)).toMatchObject({ spanId: turn!.spanId, parentSpanId: CALLER_SPAN });
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

test('with no OTEL_* variables nothing is exported, yet the caller’s trace still reaches the tools', async () => {
  const requestsBefore = receiver.requests;
  const d = await startApp(TOOLS(tools.url));
  const trace = '0123456789abcdef0123456789abcdef';
  try {
    await d.dispatch.dispatch({ sessionId: 'untraced', calls: [{ id: 'w1', name: 'weather', arguments: '{}' }] }, { metadata: { traceparent: `00-${trace}-1111222233334444-01` } });
  } finally {
    await d.close();
  }
  expect(receiver.requests).toBe(requestsBefore);
  const header = String(tools.received.at(-1)!.headers.traceparent);
  expect(header).toMatch(new RegExp(`^00-${trace}-[0-9a-f]{16}-01$`));
  expect(header).not.toContain('1111222233334444');
});

test('a caller’s unsampled trace makes no spans, yet its trace id reaches the tools, unsampled', async () => {
  const server = await daemon({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50' });
  const client = createDispatchClient(server.address);
  const unsampled = '99998888777766665555444433332222';
  const sampled = '11112222333344445555666677778888';
  try {
    await client.dispatch({ sessionId: 'unsampled', calls: [{ id: 'w1', name: 'weather', arguments: '{}' }] }, { metadata: { traceparent: `00-${unsampled}-1111222233334444-00` } });
    const header = String(tools.received.at(-1)!.headers.traceparent);
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
