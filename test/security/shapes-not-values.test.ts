// Logs and events describe arguments by their shape, never their values, unless the debug flag
// (telemetry.debug_payloads) says otherwise.
import { EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import { createLogger } from '../../src/log';
import { startToolServer, json, type ToolServer } from '../helpers/servers';
import { startAuthApp, type AuthApp } from './support/auth-app';
import { collectEvents, isTurnEnd } from './support/event-stream';

const VALUE = 'pa55-VALUE-of-the-user-7e1f';
/** A value that is no secret at all: shapes-only must hide it too. */
const PLAIN = 'Reykjavik-harbour';

let tools: ToolServer;
beforeAll(async () => {
  tools = await startToolServer({ '/ok': json({ done: true }), '/fail': json({ error: 'nope' }, 0, 500), '/slow': json({ late: true }, 400) });
});
afterAll(() => tools.close());

const yaml = (extra = '') => `tools:
  - name: ok
    effect: read_only
    http: { url: "${tools.url}/ok" }
  - name: fail
    effect: read_only
    http: { url: "${tools.url}/fail" }
  - name: slow
    effect: side_effect
    timeout_ms: 50
    http: { url: "${tools.url}/slow" }
  - name: typed
    effect: read_only
    input_schema: '{"type":"object","properties":{"pin":{"type":"number"}},"required":["pin"]}'
    http: { url: "${tools.url}/ok" }
${extra}`;

/** Runs calls that succeed, fail (5xx, retried, opening the breaker), time out and are refused, all carrying VALUE. */
async function exercise(app: AuthApp, session: string): Promise<void> {
  const args = JSON.stringify({ password: VALUE, nested: { list: [VALUE] }, city: PLAIN });
  const calls = [
    { id: 'ok', name: 'ok', arguments: args },
    ...[1, 2, 3, 4, 5, 6].map((i) => ({ id: `fail${i}`, name: 'fail', arguments: JSON.stringify({ password: VALUE, i }) })),
    { id: 'slow', name: 'slow', arguments: args },
    { id: 'typed', name: 'typed', arguments: JSON.stringify({ pin: VALUE }) },
    { id: 'broken', name: 'ok', arguments: `{"password": "${VALUE}"` },
    { id: 'unknown', name: 'no_such_tool', arguments: args },
  ];
  await app.dispatch.dispatch({ sessionId: session, calls });
}

test('with the defaults, no log line and no event carries an argument value; events carry the shape', async () => {
  const lines: string[] = [];
  const app = await startAuthApp(yaml(), { logger: createLogger('debug', (l) => lines.push(l) > 0) });
  const events = collectEvents(app.dispatch, {});
  try {
    await events.ready();
    await exercise(app, 'shape-session');
    expect(await events.waitFor(isTurnEnd('shape-session'))).toBe(true);
  } finally {
    events.cancel();
    await app.close();
  }
  expect(lines.length).toBeGreaterThan(0);
  expect(lines.filter((l) => l.includes(VALUE) || l.includes(PLAIN))).toEqual([]);
  const leaking = events.events.filter((e) => JSON.stringify(e.attributes).includes(VALUE) || JSON.stringify(e.attributes).includes(PLAIN));
  expect(leaking.map((e) => [EventKind[e.kind], e.toolCallId, e.attributes])).toEqual([]);
  const received = events.events.find((e) => e.kind === EventKind.CALL_RECEIVED && e.toolCallId === 'ok')!;
  expect(JSON.parse(received.attributes['dispatch.arguments.shape']!)).toEqual({ password: 'string', nested: { list: ['string', 'x1'] }, city: 'string' });
});

test('with telemetry.debug_payloads, events carry the argument text, secrets still redacted (the flag is what lets values through)', async () => {
  const app = await startAuthApp(yaml('telemetry:\n  debug_payloads: true\n'));
  const events = collectEvents(app.dispatch, {});
  try {
    await events.ready();
    await app.dispatch.dispatch({ sessionId: 'debug-session', calls: [{ id: 'ok', name: 'ok', arguments: JSON.stringify({ password: VALUE, city: PLAIN }) }] });
    expect(await events.waitFor(isTurnEnd('debug-session'))).toBe(true);
  } finally {
    events.cancel();
    await app.close();
  }
  const received = events.events.find((e) => e.kind === EventKind.CALL_RECEIVED)!;
  expect(received.attributes['dispatch.arguments']).toContain(PLAIN);
  expect(received.attributes['dispatch.arguments']).not.toContain(VALUE);
});

test('with telemetry.debug_payloads, a secret that the 8,000-character cut of the arguments splits leaves nothing of itself in the event', async () => {
  const key = `sk-proj-${'A1b2C3d4E5f6G7h8I9j0'.repeat(3)}`;
  // The key's value starts 12 characters before the cut, so that the cut splits it; once short
  // arguments, once arguments past the part redacted whole (64,000 characters).
  const argumentsWith = (after: string) => {
    const head = JSON.stringify({ note: '', key: '' }).indexOf('"key"') + '"key":"'.length;
    return JSON.stringify({ note: 'x'.repeat(8_000 - head - 12), key, after });
  };
  const app = await startAuthApp(yaml('telemetry:\n  debug_payloads: true\n'));
  const events = collectEvents(app.dispatch, {});
  try {
    await events.ready();
    const calls = [
      { id: 'short', name: 'ok', arguments: argumentsWith('') },
      { id: 'long', name: 'ok', arguments: argumentsWith('y'.repeat(100_000)) },
    ];
    await app.dispatch.dispatch({ sessionId: 'debug-cut-session', calls });
    expect(await events.waitFor(isTurnEnd('debug-cut-session'))).toBe(true);
  } finally {
    events.cancel();
    await app.close();
  }
  for (const id of ['short', 'long']) {
    const text = events.events.find((e) => e.kind === EventKind.CALL_RECEIVED && e.toolCallId === id)!.attributes['dispatch.arguments']!;
    expect(text.startsWith('{"note":"xxx')).toBe(true);
    expect(text.length).toBeLessThanOrEqual(8_003);
    expect(text).not.toContain('sk-proj');
  }
});

test('secrets in arguments are redacted from trajectory memory, as from outputs (DESIGN 9)', async () => {
  const app = await startAuthApp(yaml());
  const secret = 'sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c3d2e1f0a';
  try {
    await app.dispatch.dispatch({ sessionId: 'memory-session', calls: [{ id: 'c', name: 'ok', arguments: JSON.stringify({ api_key: secret, q: 'weather' }) }] });
    const memory = await app.app.deps.store.memory({ tenant: 'default', sessionId: 'memory-session' });
    expect(memory).toHaveLength(1);
    expect(memory[0]).toContain('weather');
    expect(memory[0]).not.toContain(secret);
  } finally {
    await app.close();
  }
});
