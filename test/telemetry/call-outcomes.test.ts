import { status } from '@grpc/grpc-js';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { alertsOf } from '../../src/telemetry/rate-alerts';
import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { startMetricsApp, type MetricsApp } from './metrics-app';

// What the call series and GetToolStats say of calls answered by an idempotency record, of the
// calls of a parallel turn that ended with a hard error, and the alerts' wording. Real gRPC server
// on 127.0.0.1:0, real HTTP tools, the real /metrics endpoint.

const TOOLS = (url: string) => `
tools:
  - name: late_send
    effect: side_effect
    timeout_ms: 50
    input_schema: '{"type":"object"}'
    http: { url: "${url}/late" }
  - name: held_send
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${url}/held" }
  - name: fast
    effect: read_only
    concurrency_safe: true
    input_schema: '{"type":"object"}'
    http: { url: "${url}/fast" }
  - name: send
    effect: side_effect
    concurrency_safe: true
    input_schema: '{"type":"object"}'
    http: { url: "${url}/send" }
  - name: slow
    effect: read_only
    concurrency_safe: true
    input_schema: '{"type":"object"}'
    http: { url: "${url}/slow" }
  - name: same
    effect: read_only
    concurrency_safe: true
    skip_memoize: true
    input_schema: '{"type":"object"}'
    http: { url: "${url}/same" }
  - name: idle
    effect: read_only
    concurrency_safe: true
    input_schema: '{"type":"object"}'
    http: { url: "${url}/idle" }
  - name: idle_send
    effect: side_effect
    concurrency_safe: true
    input_schema: '{"type":"object"}'
    http: { url: "${url}/idle_send" }
`;

let tools: ToolServer;
let d: MetricsApp;

beforeAll(async () => {
  tools = await startToolServer({
    '/late': json({ sent: true }, 300),
    '/held': json({ sent: true }, 400),
    '/fast': json({ ok: true }),
    '/send': json({ sent: true }),
    '/slow': json({ ok: true }, 2000),
    '/same': json({ same: 1 }),
    '/idle': json({ ok: true }),
    '/idle_send': json({ sent: true }),
  });
  d = await startMetricsApp(TOOLS(tools.url));
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});

const one = (name: string, args: object, sessionId: string) => d.dispatch.dispatch({ sessionId, calls: [{ id: 'c', name, arguments: JSON.stringify(args) }] });
const statsOf = async (tool: string) => (await d.registry.getToolStats({ tool })).stats[0]!;
const hits = (path: string) => tools.count(path);

test('a re-call answered OUTCOME_UNKNOWN or IN_PROGRESS by the idempotency record is an idempotent hit, as a replay is', async () => {
  const first = await one('late_send', { to: 'a' }, 'idem');
  expect(first.results[0]!.error?.kind).toBe(ErrorKind.TIMEOUT);
  const again = await one('late_send', { to: 'a' }, 'idem');
  expect(again.results[0]!.error?.kind).toBe(ErrorKind.OUTCOME_UNKNOWN);
  const running = one('held_send', { to: 'b' }, 'idem');
  await new Promise((resolve) => setTimeout(resolve, 100));
  const meanwhile = await one('held_send', { to: 'b' }, 'idem');
  expect(meanwhile.results[0]!.error?.kind).toBe(ErrorKind.IN_PROGRESS);
  expect((await running).results[0]!.isError).toBe(false);
  expect(hits('/late') + hits('/held')).toBe(2);

  const m = await d.scrape();
  expect(m.value('dispatch_tool_idempotent_hits_total', { tenant: 'default', tool: 'late_send' })).toBe(1);
  expect(m.value('dispatch_tool_idempotent_hits_total', { tenant: 'default', tool: 'held_send' })).toBe(1);
  expect((await statsOf('late_send')).rates!.idempotentHit).toBe(0.5);
  expect((await statsOf('held_send')).alerts).toEqual(['idempotent_hit: 50% > 5%']);
});

test('a parallel turn cancelled after some calls finished: those keep their outcome, the one cut short is CANCELLED', async () => {
  const abort = new AbortController();
  setTimeout(() => abort.abort(), 400);
  const calls = [
    { id: 'a', name: 'fast', arguments: '{"p":1}' },
    { id: 'b', name: 'send', arguments: '{"to":"q"}' },
    { id: 'c', name: 'slow', arguments: '{}' },
  ];
  await expect(d.dispatch.dispatch({ sessionId: 'cancelled', mode: 2, calls }, { signal: abort.signal })).rejects.toMatchObject({ code: status.CANCELLED });
  expect(hits('/send')).toBe(1);
  await new Promise((resolve) => setTimeout(resolve, 100));
  const m = await d.scrape();
  const calls_ = (tool: string, outcome: string) => m.value('dispatch_tool_calls_total', { tenant: 'default', tool, outcome });
  expect([calls_('fast', 'ok'), calls_('fast', 'CANCELLED')]).toEqual([1, undefined]);
  expect([calls_('send', 'ok'), calls_('send', 'CANCELLED')]).toEqual([1, undefined]);
  expect(calls_('slow', 'CANCELLED')).toBe(1);
});

test('a parallel turn ended LOOP_DETECTED: the call that looped says so, siblings it stopped are CANCELLED, and attempts are the attempts begun', async () => {
  for (let i = 0; i < 10; i++) await one('same', { q: 2 }, 'looping');
  const calls = [
    { id: 'a', name: 'idle', arguments: '{"p":1}' },
    { id: 'b', name: 'same', arguments: '{"q":2}' },
    { id: 'c', name: 'idle_send', arguments: '{"to":"x"}' },
  ];
  await expect(d.dispatch.dispatch({ sessionId: 'looping', mode: 2, calls })).rejects.toMatchObject({ code: status.ABORTED });
  await new Promise((resolve) => setTimeout(resolve, 200));
  const m = await d.scrape();
  const value = (name: string, labels: Record<string, string>) => m.value(name, { tenant: 'default', ...labels });
  expect(value('dispatch_tool_calls_total', { tool: 'same', outcome: 'LOOP_DETECTED' })).toBe(1);
  expect(value('dispatch_tool_attempts_total', { tool: 'same' })).toBe(11);
  for (const tool of ['idle', 'idle_send']) {
    expect(value('dispatch_tool_calls_total', { tool, outcome: 'LOOP_DETECTED' })).toBeUndefined();
    // Finished (ok) if it got there before the loop stopped the turn, else CANCELLED: never the sibling's error.
    const ran = hits(`/${tool}`);
    expect(value('dispatch_tool_calls_total', { tool, outcome: ran === 1 ? 'ok' : 'CANCELLED' })).toBe(1);
    expect((await statsOf(tool)).calls).toBe(1n);
  }
});

test('an alert shows the rate with the decimals it takes to be visibly past its threshold', () => {
  const none = { validationFailure: 0, timeout: 0, retry: 0, idempotentHit: 0, resultBounding: 0, unexpectedException: 0, error: 0 };
  expect(alertsOf({ ...none, unexpectedException: 1 / 2001 })).toEqual(['unexpected_exception: 0.05% > 0%']);
  expect(alertsOf({ ...none, timeout: 0.05004 })).toEqual(['timeout: 5.004% > 5%']);
  expect(alertsOf({ ...none, timeout: 101 / 2000 })).toEqual(['timeout: 5.1% > 5%']);
  expect(alertsOf({ ...none, validationFailure: 1 / 3 })).toEqual(['validation_failure: 33.3% > 15%']);
  expect(alertsOf({ ...none, retry: 0.1 })).toEqual([]);
});
