import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon, type Daemon } from '../helpers/daemon';
import { startToolServer, json, type ToolServer } from '../helpers/servers';
import type { ReceivedSpan } from './otlp-receiver';

/** The span id of the caller's traceparent in the traced turns. */
export const CALLER_SPAN = '00f067aa0ba902b7';

/** The sampled traceparent of the caller's span in `trace`. */
export const traceparentOf = (trace: string) => `00-${trace}-${CALLER_SPAN}-01`;

/** Two HTTP tools and their config: `weather` answers, `flaky` fails with 503 every other time. */
export interface TracedTools {
  readonly server: ToolServer;
  /** A dispatchd config file naming both tools. */
  readonly configFile: string;
  close(): Promise<void>;
}

export async function startTracedTools(): Promise<TracedTools> {
  let flaky = 0;
  const server = await startToolServer({
    '/weather': json({ temp: 20 }),
    '/flaky': (_req, res) => void (flaky++ % 2 === 0 ? res.writeHead(503).end('busy') : res.writeHead(200).end('"fine"')),
  });
  const dir = mkdtempSync(join(tmpdir(), 'dispatch-traces-'));
  const configFile = join(dir, 'tools.yaml');
  writeFileSync(configFile, tracedToolsYaml(server.url));
  return {
    server,
    configFile,
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const tracedToolsYaml = (url: string) => `
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

/** A dispatchd process and its address; `stop` ends it with SIGTERM, as a deployment does. */
export interface TracedDaemon {
  readonly d: Daemon;
  readonly address: string;
  stop(): Promise<void>;
}

/**
 * Trace export runs in a real dispatchd process (the compiled bin, as deployed): the OTLP
 * exporter loads its HTTP transport with a dynamic import(), which jest's module sandbox refuses.
 */
export async function startTracedDaemon(configFile: string, env: NodeJS.ProcessEnv): Promise<TracedDaemon> {
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

/** The turn {@link expectTurnSpans} checks: weather (w1) and flaky (f1) in session `traced`. */
export const TRACED_TURN = { sessionId: 'traced', calls: [{ id: 'w1', name: 'weather', arguments: '{"city":"Rome"}' }, { id: 'f1', name: 'flaky', arguments: '{}' }] };

const named = (spans: ReceivedSpan[], name: string) => spans.filter((s) => s.name === name);

/**
 * Asserts the six spans of a turn calling weather (w1) and flaky (f1, retried once) under the
 * caller's span: the turn, an `execute_tool` span per call, an attempt span per attempt, with
 * their GenAI and dispatch attributes. Returns the turn, weather's call and its attempt.
 */
export function expectTurnSpans(spans: ReceivedSpan[]): { turn: ReceivedSpan; weather: ReceivedSpan; weatherAttempt: ReceivedSpan } {
  expect(spans).toHaveLength(6);
  const [turn] = named(spans, 'dispatch.v1.DispatchService/Dispatch');
  expect(turn).toBeDefined();
  expect(turn!.parentSpanId).toBe(CALLER_SPAN);
  expect(turn!.kind).toBe(2); // SERVER
  expect(turn!.attributes).toMatchObject({ 'dispatch.tenant': 'default', 'dispatch.session_id': 'traced', 'dispatch.calls': 2n });

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
  return { turn: turn!, weather: weather!, weatherAttempt: weatherAttempt! };
}
