import { ErrorKind, EventKind, DispatchMode, type Event } from '../../gen/dispatch/v1/dispatch_pb';
import { defaultGuards, retryTreeReflector, type Guards } from '../../src/pipeline';
import { json, startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { describe as seq, ofSession, tapEvents, turnEnded, type EventTap } from './event-tap';

type TestApp = Awaited<ReturnType<typeof startApp>>;

const TOOLS = (url: string) => `
tools:
  - name: weather
    effect: read_only
    input_schema: '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}'
    retry: { initial_backoff_ms: 5, max_backoff_ms: 20 }
    http: { url: "${url}/weather" }
  - name: flaky
    effect: read_only
    input_schema: '{"type":"object"}'
    retry: { initial_backoff_ms: 5, max_backoff_ms: 20 }
    http: { url: "${url}/flaky" }
  - name: failing
    effect: read_only
    input_schema: '{"type":"object"}'
    retry: { max_attempts: 1 }
    http: { url: "${url}/failing" }
  - name: send
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${url}/send" }
  - name: pay
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${url}/pay" }
  - name: echo
    effect: read_only
    concurrency_safe: true
    input_schema: '{"type":"object"}'
    builtin: { name: echo }
  - name: sleep
    effect: read_only
    input_schema: '{"type":"object"}'
    builtin: { name: sleep }
`;

let tools: ToolServer;
let flakyCalls = 0;

beforeAll(async () => {
  tools = await startToolServer({
    '/weather': json({ temp: 21 }),
    '/flaky': (_req, res) => {
      flakyCalls++;
      if (flakyCalls % 2 === 1) res.writeHead(503).end('busy');
      else res.writeHead(200).end('{"ok":true}');
    },
    '/failing': json({ error: 'down' }, 0, 500),
    '/send': json({ sent: true }),
    '/pay': json({ error: 'declined' }, 0, 500),
  });
});
afterAll(() => tools.close());

async function withApp(guards: Guards | undefined, body: (d: TestApp, tap: EventTap) => Promise<void>): Promise<void> {
  const d = await startApp(TOOLS(tools.url), guards ? { pipeline: { guards } } : {});
  const tap = await tapEvents(d.address);
  try {
    await body(d, tap);
  } finally {
    tap.close();
    await d.close();
  }
}

const call = (id: string, name: string, args: object = {}) => ({ id, name, arguments: JSON.stringify(args) });
const attr = (e: Event | undefined, key: string) => e?.attributes[key];

test('a success: CALL_RECEIVED, TOOL_PRE, TOOL_POST, TURN_END, span-shaped and parented', async () => {
  await withApp(undefined, async (d, tap) => {
    await d.dispatch.dispatch({ sessionId: 's-ok', turn: 3, calls: [call('c1', 'weather', { city: 'Paris' })] });
    await tap.waitFor(turnEnded('s-ok'));
    const events = ofSession(tap.events, 's-ok');
    expect(seq(events)).toEqual(['CALL_RECEIVED:c1', 'TOOL_PRE:c1#1', 'TOOL_POST:c1#1', 'TURN_END']);
    const [received, pre, post, end] = events as [Event, Event, Event, Event];
    expect(new Set(events.map((e) => e.traceId)).size).toBe(1);
    expect(received.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(received.parentSpanId).toBe(end.spanId);
    expect(pre.parentSpanId).toBe(received.spanId);
    expect(post.spanId).toBe(pre.spanId);
    expect(end.parentSpanId).toBe('');
    expect(received.name).toBe('execute_tool weather');
    expect(end.toolCallId).toBe('');
    expect(events.every((e) => e.turn === 3 && e.startTime !== undefined)).toBe(true);
    expect(post.endTime).toBeDefined();
    expect(Number(post.endTime!.seconds) * 1e9 + post.endTime!.nanos).toBeGreaterThanOrEqual(Number(post.startTime!.seconds) * 1e9 + post.startTime!.nanos);
    expect(attr(received, 'dispatch.arguments.shape')).toBe('{"city":"string"}');
    expect(JSON.stringify(received.attributes)).not.toContain('Paris');
    expect(attr(pre, 'dispatch.effect')).toBe('read_only');
    expect(post.attributes).toMatchObject({ 'dispatch.outcome': 'ok', 'gen_ai.tool.name': 'weather', 'dispatch.replay': 'false', 'dispatch.truncated': 'false', 'dispatch.attempt': '1' });
    const traceparent = tools.received.at(-1)!.headers.traceparent;
    expect(traceparent).toBe(`00-${pre.traceId}-${pre.spanId}-00`);
  });
});

test('a retried failure: the 503 attempt, RETRY, then the second attempt', async () => {
  flakyCalls = 0;
  await withApp(undefined, async (d, tap) => {
    const { results } = await d.dispatch.dispatch({ sessionId: 's-retry', calls: [call('c1', 'flaky')] });
    expect(results[0]!.attempts).toBe(2);
    await tap.waitFor(turnEnded('s-retry'));
    const events = ofSession(tap.events, 's-retry');
    expect(seq(events)).toEqual(['CALL_RECEIVED:c1', 'TOOL_PRE:c1#1', 'TOOL_POST:c1#1', 'RETRY:c1#1', 'TOOL_PRE:c1#2', 'TOOL_POST:c1#2', 'TURN_END']);
    expect(events[2]!.attributes).toMatchObject({ 'dispatch.outcome': 'TOOL_ERROR', 'error.type': 'TOOL_ERROR' });
    expect(events[5]!.attributes['dispatch.outcome']).toBe('ok');
    expect(events[3]!.spanId).toBe(events[0]!.spanId);
    expect(Number(events[3]!.attributes['dispatch.retry.delay_ms'])).toBeGreaterThanOrEqual(0);
    expect(events[4]!.spanId).not.toBe(events[1]!.spanId);
    expect(events[4]!.parentSpanId).toBe(events[0]!.spanId);
  });
});

test('a call blocked by a pre-tool hook ends its attempt BLOCKED; the tool never runs', async () => {
  const guards: Guards = { ...defaultGuards(retryTreeReflector), preHook: async () => ({ action: 'block', reason: 'not today' }) };
  const before = tools.count('/weather');
  await withApp(guards, async (d, tap) => {
    await d.dispatch.dispatch({ sessionId: 's-block', calls: [call('c1', 'weather', { city: 'Oslo' })] });
    await tap.waitFor(turnEnded('s-block'));
    const events = ofSession(tap.events, 's-block');
    expect(seq(events)).toEqual(['CALL_RECEIVED:c1', 'TOOL_PRE:c1#1', 'TOOL_POST:c1#1', 'TURN_END']);
    expect(events[2]!.attributes['error.type']).toBe('BLOCKED');
  });
  expect(tools.count('/weather')).toBe(before);
});

test('calls answered without dispatch (not offered, invalid arguments) have no attempts', async () => {
  await withApp(undefined, async (d, tap) => {
    await d.dispatch.dispatch({ sessionId: 's-none', offeredTools: ['weather'], calls: [call('c1', 'echo'), call('c2', 'weather', { city: 7 })] });
    await tap.waitFor(turnEnded('s-none'));
    // Each ends with CALL_REFUSED (before, with nothing: test/events/call-refused.test.ts).
    expect(seq(ofSession(tap.events, 's-none'))).toEqual(['CALL_RECEIVED:c1', 'CALL_REFUSED:c1', 'CALL_RECEIVED:c2', 'CALL_REFUSED:c2', 'TURN_END']);
  });
});

test('a breaker refusal, after the BREAKER_STATE change that the fifth failure caused (the app\'s own breakers)', async () => {
  await withApp(undefined, async (d, tap) => {
    for (let i = 1; i <= 5; i++) await d.dispatch.dispatch({ sessionId: `s-fail-${i}`, calls: [call('c1', 'failing', { i })] });
    await tap.waitFor(turnEnded('s-fail-5'));
    const fifth = tap.events.slice(tap.events.findIndex((e) => e.sessionId === 's-fail-5'));
    expect(seq(fifth)).toEqual(['CALL_RECEIVED:c1', 'TOOL_PRE:c1#1', 'TOOL_POST:c1#1', 'BREAKER_STATE', 'TURN_END']);
    expect(fifth[3]).toMatchObject({ tool: 'failing', sessionId: '' });
    expect(fifth[3]!.attributes['dispatch.breaker.state']).toBe('open');
    const before = tools.count('/failing');
    await d.dispatch.dispatch({ sessionId: 's-open', calls: [call('c1', 'failing', { i: 6 })] });
    await tap.waitFor(turnEnded('s-open'));
    const refused = ofSession(tap.events, 's-open');
    expect(seq(refused)).toEqual(['CALL_RECEIVED:c1', 'TOOL_PRE:c1#1', 'TOOL_POST:c1#1', 'TURN_END']);
    expect(refused[2]!.attributes['error.type']).toBe('BREAKER_OPEN');
    expect(tools.count('/failing')).toBe(before);
  });
});

test('a parallel turn: CALL_RECEIVED for every call before any TOOL_PRE, each attempt paired', async () => {
  await withApp(undefined, async (d, tap) => {
    await d.dispatch.dispatch({ sessionId: 's-par', mode: DispatchMode.PARALLEL, calls: [call('a', 'echo', { n: 1 }), call('b', 'echo', { n: 2 }), call('c', 'echo', { n: 3 })] });
    await tap.waitFor(turnEnded('s-par'));
    const kinds = seq(ofSession(tap.events, 's-par'));
    expect(kinds.slice(0, 3)).toEqual(['CALL_RECEIVED:a', 'CALL_RECEIVED:b', 'CALL_RECEIVED:c']);
    expect(kinds.at(-1)).toBe('TURN_END');
    const rest = kinds.slice(3, -1);
    expect([...rest].sort()).toEqual(['TOOL_POST:a#1', 'TOOL_POST:b#1', 'TOOL_POST:c#1', 'TOOL_PRE:a#1', 'TOOL_PRE:b#1', 'TOOL_PRE:c#1']);
    for (const id of ['a', 'b', 'c']) expect(rest.indexOf(`TOOL_PRE:${id}#1`)).toBeLessThan(rest.indexOf(`TOOL_POST:${id}#1`));
  });
});

test('an identical side-effecting call replays: IDEMPOTENT_REPLAY between TOOL_PRE and TOOL_POST', async () => {
  await withApp(undefined, async (d, tap) => {
    const before = tools.count('/send');
    await d.dispatch.dispatch({ sessionId: 's-idem', turn: 1, calls: [call('c1', 'send', { to: 'x' })] });
    await d.dispatch.dispatch({ sessionId: 's-idem', turn: 2, calls: [call('c2', 'send', { to: 'x' })] });
    await tap.waitFor(turnEnded('s-idem', 2));
    const second = ofSession(tap.events, 's-idem').filter((e) => e.turn === 2);
    expect(seq(second)).toEqual(['CALL_RECEIVED:c2', 'TOOL_PRE:c2#1', 'IDEMPOTENT_REPLAY:c2#1', 'TOOL_POST:c2#1', 'TURN_END']);
    expect(second[3]!.attributes['dispatch.replay']).toBe('true');
    expect(second[1]!.attributes['dispatch.effect']).toBe('side_effect');
    expect(tools.count('/send')).toBe(before + 1);
  });
});

test("a replayed failure's TOOL_POST says its kind, as the metrics do, not ok", async () => {
  await withApp(undefined, async (d, tap) => {
    await d.dispatch.dispatch({ sessionId: 's-replay-fail', turn: 1, calls: [call('p1', 'pay', { card: 'x' })] });
    const { results } = await d.dispatch.dispatch({ sessionId: 's-replay-fail', turn: 2, calls: [call('p2', 'pay', { card: 'x' })] });
    expect(results[0]!.idempotentReplay).toBe(true);
    await tap.waitFor(turnEnded('s-replay-fail', 2));
    const posts = ofSession(tap.events, 's-replay-fail').filter((e) => e.kind === EventKind.TOOL_POST);
    expect(posts.map((e) => [e.attributes['dispatch.replay'], e.attributes['dispatch.outcome'], e.attributes['error.type']])).toEqual([
      ['false', 'TOOL_ERROR', 'TOOL_ERROR'],
      ['true', 'TOOL_ERROR', 'TOOL_ERROR'],
    ]);
  });
});

test('loops: LOOP_WARNING rides on the third identical result; LOOP_STOP ends the eleventh call', async () => {
  await withApp(undefined, async (d, tap) => {
    for (let turn = 1; turn <= 10; turn++) await d.dispatch.dispatch({ sessionId: 's-loop', turn, calls: [call(`c${turn}`, 'echo', { same: true })] });
    await expect(d.dispatch.dispatch({ sessionId: 's-loop', turn: 11, calls: [call('c11', 'echo', { same: true })] })).rejects.toMatchObject({ code: 10 });
    await tap.waitFor(turnEnded('s-loop', 11));
    const events = ofSession(tap.events, 's-loop');
    expect(seq(events.filter((e) => e.turn === 3))).toEqual(['CALL_RECEIVED:c3', 'TOOL_PRE:c3#1', 'LOOP_WARNING:c3#1', 'TOOL_POST:c3#1', 'TURN_END']);
    expect(seq(events.filter((e) => e.turn === 2))).toEqual(['CALL_RECEIVED:c2', 'TOOL_PRE:c2#1', 'TOOL_POST:c2#1', 'TURN_END']);
    const last = events.filter((e) => e.turn === 11);
    expect(seq(last)).toEqual(['CALL_RECEIVED:c11', 'TOOL_PRE:c11#1', 'LOOP_STOP:c11#1', 'TOOL_POST:c11#1', 'TURN_END']);
    expect(last[3]!.attributes).toMatchObject({ 'dispatch.outcome': 'LOOP_DETECTED', 'error.type': 'LOOP_DETECTED' });
    expect(last[4]!.attributes).toMatchObject({ 'dispatch.outcome': 'LOOP_DETECTED', 'error.type': 'LOOP_DETECTED' });
    expect(last[2]!.spanId).toBe(last[1]!.spanId);
    expect(last[3]!.spanId).toBe(last[1]!.spanId);
  });
});

test('a cancelled call: its attempt still gets a TOOL_POST, with CANCELLED as the outcome', async () => {
  await withApp(undefined, async (d, tap) => {
    const controller = new AbortController();
    const pending = d.dispatch.dispatch({ sessionId: 's-cancel', calls: [call('c1', 'sleep', { ms: 5000 })] }, { signal: controller.signal });
    await tap.waitFor((events) => events.some((e) => e.sessionId === 's-cancel' && e.kind === EventKind.TOOL_PRE));
    controller.abort();
    await expect(pending).rejects.toBeDefined();
    await tap.waitFor(turnEnded('s-cancel'));
    const events = ofSession(tap.events, 's-cancel');
    expect(seq(events)).toEqual(['CALL_RECEIVED:c1', 'TOOL_PRE:c1#1', 'TOOL_POST:c1#1', 'TURN_END']);
    expect(events[2]!.attributes).toMatchObject({ 'dispatch.outcome': 'CANCELLED', 'error.type': 'CANCELLED' });
    expect(events[2]!.spanId).toBe(events[1]!.spanId);
  });
});

test('an interactive Ask: APPROVAL_REQUESTED then APPROVAL_RESOLVED inside the attempt, before TOOL_POST', async () => {
  const guards: Guards = { ...defaultGuards(retryTreeReflector), preHook: async () => ({ action: 'ask', reason: 'costly' }), awaitApproval: async (_id, _signal, _tenant, waiting) => (waiting?.(), true) };
  await withApp(guards, async (d, tap) => {
    await d.dispatch.dispatch({ sessionId: 's-ask', interactive: true, calls: [call('c1', 'echo')] });
    await tap.waitFor(turnEnded('s-ask'));
    const events = ofSession(tap.events, 's-ask');
    expect(seq(events)).toEqual(['CALL_RECEIVED:c1', 'TOOL_PRE:c1#1', 'APPROVAL_REQUESTED:c1#1', 'APPROVAL_RESOLVED:c1#1', 'TOOL_POST:c1#1', 'TURN_END']);
    expect(events[2]!.attributes['dispatch.reason']).toBe('costly');
    expect(events[2]!.attributes['dispatch.approval_id']).toMatch(/^[0-9a-f-]{36}$/);
    // Guards that do not say how the wait ended (this one approves at once) still close it: approved.
    expect(events[3]!.attributes).toMatchObject({ 'dispatch.approval_id': events[2]!.attributes['dispatch.approval_id'], 'dispatch.approval.decision': 'approved' });
    expect(events[3]!.spanId).toBe(events[2]!.spanId);
    expect(events[4]!.attributes['dispatch.outcome']).toBe('ok');
  });
});

test('an Ask refused at once (too many approvals waiting) announces no approval id and says why', async () => {
  const guards: Guards = { ...defaultGuards(retryTreeReflector), preHook: async () => ({ action: 'ask', reason: 'costly' }), awaitApproval: async () => false };
  await withApp(guards, async (d, tap) => {
    const { results } = await d.dispatch.dispatch({ sessionId: 's-ask-full', interactive: true, calls: [call('c1', 'echo')] });
    // Refused for want of room, not denied: recoverable UNAVAILABLE, which dispatch retries as it retries a full concurrency cap.
    expect(results[0]!.error).toMatchObject({ kind: ErrorKind.UNAVAILABLE, recoverable: true });
    expect(results[0]!.error?.message).toBe('needs approval, and too many approvals are waiting already; try again later: costly');
    await tap.waitFor(turnEnded('s-ask-full'));
    expect(seq(ofSession(tap.events, 's-ask-full'))).toEqual(['CALL_RECEIVED:c1', 'TOOL_PRE:c1#1', 'TOOL_POST:c1#1', 'RETRY:c1#1', 'TOOL_PRE:c1#2', 'TOOL_POST:c1#2', 'TURN_END']);
  });
});

test('events carry argument values only with telemetry.debug_payloads, secrets redacted', async () => {
  const d = await startApp(`telemetry: { debug_payloads: true }\n${TOOLS(tools.url)}`);
  const tap = await tapEvents(d.address, { kinds: [EventKind.CALL_RECEIVED] });
  try {
    const key = 'sk-proj-4f9aT7qLm2Xc8VbN1kR5sD0wE3yU6iO';
    await d.dispatch.dispatch({ sessionId: 's-debug', calls: [call('c1', 'echo', { city: 'visible', key })] });
    await tap.waitFor((events) => events.length === 1);
    const text = tap.events[0]!.attributes['dispatch.arguments']!;
    expect(text).toContain('"city":"visible"');
    expect(text).toContain('[REDACTED');
    expect(text).not.toContain(key);
  } finally {
    tap.close();
    await d.close();
  }
});
