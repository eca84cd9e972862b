import { EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import { closedPort, json, startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';
import { formatEvent } from '../../src/events/format-event';
import { tapEvents } from './event-tap';

// Found by a probe of observability: an operator could not tell why a tool failed. TOOL_POST said
// outcome=TOOL_ERROR and nothing else (no phase, no HTTP status, no words even with debug
// payloads), RETRY said "transient failure" whatever failed, and TOOL_POST carried
// dispatch.resolved_tool on every attempt, though the docs say only when another tool answered.

let tools: ToolServer;
let down: string;
beforeAll(async () => {
  tools = await startToolServer({ '/fail': json({ error: 'internal boom' }, 0, 500), '/ok': json({ ok: true }) });
  down = `http://127.0.0.1:${await closedPort()}/down`;
});
afterAll(() => tools.close());

const yaml = (extra = '') => `
tools:
  - { name: failing, effect: read_only, retry: { max_attempts: 2, initial_backoff_ms: 1, max_backoff_ms: 5 }, input_schema: '{"type":"object"}', http: { url: "${tools.url}/fail" } }
  - { name: unreachable, effect: read_only, retry: { max_attempts: 1 }, fallback_tool: fine, input_schema: '{"type":"object"}', http: { url: "${down}" } }
  - { name: fine, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${tools.url}/ok" } }
${extra}`;

async function eventsOf(d: TestDispatch, sessionId: string, calls: Array<{ id: string; name: string }>) {
  const tap = await tapEvents(d.address, { sessionId });
  try {
    await d.dispatch.dispatch({ sessionId, calls: calls.map((c) => ({ ...c, arguments: '{}' })) });
    await tap.waitFor((events) => events.some((e) => e.kind === EventKind.TURN_END));
    return tap.events;
  } finally {
    tap.close();
  }
}

test('a failed attempt says when it failed and the HTTP status, a retry why; its words only with debug payloads', async () => {
  const d = await startApp(yaml());
  try {
    const events = await eventsOf(d, 'fail', [{ id: 'f', name: 'failing' }]);
    const posts = events.filter((e) => e.kind === EventKind.TOOL_POST);
    expect(posts).toHaveLength(2);
    expect(posts[0]!.attributes).toMatchObject({ 'dispatch.outcome': 'TOOL_ERROR', 'dispatch.error.phase': 'after', 'http.response.status_code': '500' });
    expect(posts[0]!.attributes['dispatch.message']).toBeUndefined();
    expect(posts[0]!.attributes['dispatch.resolved_tool']).toBeUndefined();
    expect(events.find((e) => e.kind === EventKind.RETRY)!.attributes['dispatch.reason']).toBe('transient failure (TOOL_ERROR, HTTP 500)');
  } finally {
    await d.close();
  }
  const debug = await startApp(yaml('telemetry: { debug_payloads: true }'));
  try {
    const events = await eventsOf(debug, 'fail', [{ id: 'f', name: 'failing' }]);
    expect(events.find((e) => e.kind === EventKind.TOOL_POST)!.attributes['dispatch.message']).toContain('HTTP 500');
  } finally {
    await debug.close();
  }
});

test('an unreachable tool is told failed before it ran; the fallback attempt is named on its own', async () => {
  const d = await startApp(yaml());
  try {
    const posts = (await eventsOf(d, 'down', [{ id: 'u', name: 'unreachable' }])).filter((e) => e.kind === EventKind.TOOL_POST);
    expect(posts.map((e) => [e.attributes['dispatch.outcome'], e.attributes['dispatch.error.phase'], e.attributes['gen_ai.tool.name'], e.attributes['dispatch.resolved_tool']])).toEqual([
      ['UNAVAILABLE', 'before', 'unreachable', undefined],
      ['ok', undefined, 'fine', undefined],
    ]);
    // dispatchctl events' line says which tool the fallback's attempt ran.
    expect(formatEvent(posts[1]!)).toMatch(/ TOOL_POST session=down turn=0 call=u tool=unreachable ran=fine attempt=2 outcome=ok ms=\d+ chars=\d+$/);
    expect(formatEvent(posts[0]!)).toMatch(/ tool=unreachable attempt=1 outcome=UNAVAILABLE phase=before ms=/);
  } finally {
    await d.close();
  }
});
