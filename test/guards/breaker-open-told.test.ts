import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { createBreakers, DEFAULT_BREAKER_SETTINGS } from '../../src/guards';
import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { startGuardedApp } from './helpers';

// What a model is told of an open breaker. The refusal says when the breaker may let a call
// through (retry_after_ms, and the suggestion in seconds) instead of "about 30 seconds" whatever
// half_open_after_ms said. A call whose own failure opened the breaker, its retry refused, is told
// its tool's real error (the 500's message), with a note that the tool is now unavailable, not a
// bare BREAKER_OPEN; with a fallback_tool it still falls back. A 5xx's suggestion does not tell
// the model to correct its request. Real HTTP tools that count what reaches them.

let tools: ToolServer;
beforeAll(async () => {
  tools = await startToolServer({ '/boom': (_req, res) => void res.writeHead(500).end('boom'), '/mirror': json({ from: 'mirror' }) });
});
afterAll(async () => {
  await tools?.close();
});

const tool = (name: string, extra = '') => `
  - name: ${name}
    effect: read_only
    skip_memoize: true
    retry: { max_attempts: 2, initial_backoff_ms: 10, max_backoff_ms: 10 }
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/boom" }${extra}`;

const YAML = () => `
tools:${tool('lookup')}${tool('search', '\n    fallback_tool: mirror')}
  - { name: mirror, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${tools.url}/mirror" } }
policies:
  - { match: "*", breaker: { consecutive_failures: 1, half_open_after_ms: 5000 } }
`;

interface Told {
  kind: string;
  message: string;
  recoverable: boolean;
  attempts: number;
  suggestion: string;
  retry_after_ms?: number;
}
const told = (output: string) => JSON.parse(output) as Told;

test('a call whose failure opens its breaker is told the real error, that the tool is now unavailable, and until when; the next call is refused with the same wait', async () => {
  const d = await startGuardedApp(YAML());
  const before = tools.count('/boom');
  try {
    const first = (await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'a', name: 'lookup', arguments: '{}' }] })).results[0]!;
    expect(tools.count('/boom') - before).toBe(1); // the retry was refused: the breaker opened
    expect(first.error?.kind).toBe(ErrorKind.TOOL_ERROR);
    expect(first.error?.message).toBe("the tool answered HTTP 500: boom (not retried: the tool's circuit breaker opened after repeated failures, so it is temporarily unavailable)");
    const json = told(first.output);
    expect(json).toMatchObject({ kind: 'TOOL_ERROR', recoverable: true, attempts: 2, suggestion: 'The tool is temporarily unavailable after repeated failures; use another tool, or try again in about 5 seconds.' });
    expect(json.retry_after_ms).toBeGreaterThan(4000);
    expect(json.retry_after_ms).toBeLessThanOrEqual(5000);
    expect(first.error?.retryAfterMs).toBe(json.retry_after_ms);

    const refused = (await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'b', name: 'lookup', arguments: '{"n":2}' }] })).results[0]!;
    expect(tools.count('/boom') - before).toBe(1);
    expect(refused.error?.kind).toBe(ErrorKind.BREAKER_OPEN);
    const refusal = told(refused.output);
    expect(refusal).toMatchObject({ kind: 'BREAKER_OPEN', recoverable: true, attempts: 1, suggestion: 'The tool is temporarily unavailable after repeated failures; use another tool, or try again in about 5 seconds.' });
    expect(refusal.retry_after_ms).toBeGreaterThan(4000);
    expect(refusal.retry_after_ms).toBeLessThanOrEqual(json.retry_after_ms!);
  } finally {
    await d.close();
  }
});

test('a call whose retry its breaker refuses still falls back when its tool has a fallback_tool', async () => {
  const d = await startGuardedApp(YAML());
  try {
    const result = (await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'a', name: 'search', arguments: '{}' }] })).results[0]!;
    expect(result).toMatchObject({ isError: false, resolvedToolName: 'mirror', output: '{"from":"mirror"}' });
  } finally {
    await d.close();
  }
});

test('a read-only 5xx, recoverable, is not told to correct its request', async () => {
  const d = await startGuardedApp(YAML().replace('consecutive_failures: 1', 'consecutive_failures: 100'));
  try {
    const result = (await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'a', name: 'lookup', arguments: '{}' }] })).results[0]!;
    const json = told(result.output);
    expect(json).toMatchObject({ kind: 'TOOL_ERROR', message: 'the tool answered HTTP 500: boom', recoverable: true, attempts: 2 });
    expect(json.suggestion).toBe('The tool itself failed (HTTP 500), not the request: do not change the arguments for it. Call it again later, unchanged, or use another tool meanwhile.');
  } finally {
    await d.close();
  }
});

test("a half-open breaker whose probe is out tells the wait until the probe's tool times out", async () => {
  const breakers = createBreakers({ settingsFor: () => ({ ...DEFAULT_BREAKER_SETTINGS, consecutiveFailures: 1, halfOpenAfterMs: 50 }) });
  try {
    const { gate } = breakers;
    expect(gate.retryAfterMs?.('t')).toBeUndefined();
    gate.record('t', gate.tryAcquire('t', 1000)!, { ok: false, counts: true, durationMs: 1 });
    expect(gate.retryAfterMs?.('t')).toBeGreaterThan(0);
    expect(gate.retryAfterMs?.('t')).toBeLessThanOrEqual(50);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(gate.retryAfterMs?.('t')).toBeUndefined(); // half-open, its probe free
    expect(gate.tryAcquire('t', 2000)?.probe).toBe(true);
    expect(gate.retryAfterMs?.('t')).toBeGreaterThan(1900);
    expect(gate.retryAfterMs?.('t')).toBeLessThanOrEqual(2000);
  } finally {
    breakers.close();
  }
});
