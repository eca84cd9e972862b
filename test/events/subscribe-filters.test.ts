import { createHash } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import { EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { createDispatchClient, createRegistryClient } from '../../src/client';
import { startApp } from '../helpers/servers';
import { describe as seq, tapEvents, turnEnded } from './event-tap';

type TestApp = Awaited<ReturnType<typeof startApp>>;

const sha = (token: string) => createHash('sha256').update(token).digest('hex');
const YAML = `
limits: { max_subscribers_per_tenant: 3 }
auth:
  tokens:
    - { tenant: acme, scopes: [dispatch, subscribe], sha256: ${sha('tok-acme')} }
    - { tenant: globex, scopes: [dispatch, subscribe, admin], sha256: ${sha('tok-globex')} }
    - { tenant: acme, scopes: [dispatch], sha256: ${sha('tok-nosub')} }
tools:
  - name: echo
    effect: read_only
    input_schema: '{"type":"object"}'
    builtin: { name: echo }
  - name: other
    effect: read_only
    input_schema: '{"type":"object"}'
    builtin: { name: echo }
`;
const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const ACME = auth('tok-acme');
const GLOBEX = auth('tok-globex');

let d: TestApp;
let dispatch: ReturnType<typeof createDispatchClient>;
beforeAll(async () => {
  d = await startApp(YAML);
  dispatch = createDispatchClient(d.address);
});
afterAll(async () => {
  dispatch.close();
  await d.close();
});

const turn = (sessionId: string, names: string[], metadata = ACME) =>
  dispatch.dispatch({ sessionId, calls: names.map((name, i) => ({ id: `c${i + 1}`, name, arguments: '{}' })) }, { metadata });

test('filters: by session, by tool, by kind', async () => {
  const bySession = await tapEvents(d.address, { sessionId: 'f1' }, ACME);
  const byTool = await tapEvents(d.address, { tools: ['other'] }, ACME);
  const byKind = await tapEvents(d.address, { kinds: [EventKind.TOOL_POST, EventKind.TURN_END] }, ACME);
  try {
    await turn('f0', ['echo']);
    await turn('f1', ['echo', 'other']);
    await bySession.waitFor(turnEnded('f1'));
    await byKind.waitFor(turnEnded('f1'));
    await byTool.waitFor((events) => events.filter((e) => e.kind === EventKind.TOOL_POST).length === 1);
    expect(seq(bySession.events)).toEqual(['CALL_RECEIVED:c1', 'TOOL_PRE:c1#1', 'TOOL_POST:c1#1', 'CALL_RECEIVED:c2', 'TOOL_PRE:c2#1', 'TOOL_POST:c2#1', 'TURN_END']);
    expect(byTool.events.every((e) => e.tool === 'other' && e.sessionId === 'f1')).toBe(true);
    expect(seq(byTool.events)).toEqual(['CALL_RECEIVED:c2', 'TOOL_PRE:c2#1', 'TOOL_POST:c2#1']);
    expect(seq(byKind.events)).toEqual(['TOOL_POST:c1#1', 'TURN_END', 'TOOL_POST:c1#1', 'TOOL_POST:c2#1', 'TURN_END']);
  } finally {
    bySession.close();
    byTool.close();
    byKind.close();
  }
});

test("a tenant never sees another tenant's events; breaker changes reach the tenants that see the tool", async () => {
  const registry = createRegistryClient(d.address);
  await registry.registerTools({ tools: [{ name: 'private_tool', effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', executor: { case: 'builtin', value: { name: 'echo' } } }] }, { metadata: GLOBEX });
  registry.close();
  const acme = await tapEvents(d.address, {}, ACME);
  const globex = await tapEvents(d.address, {}, GLOBEX);
  try {
    await turn('same-session', ['echo'], GLOBEX);
    await turn('same-session', ['echo'], ACME);
    d.app.deps.observer.breakerState('private_tool', 'open');
    d.app.deps.observer.breakerState('echo', 'half_open');
    await acme.waitFor(turnEnded('same-session'));
    await globex.waitFor((events) => events.filter((e) => e.kind === EventKind.BREAKER_STATE).length === 2);
    await acme.waitFor((events) => events.some((e) => e.kind === EventKind.BREAKER_STATE));
    expect(seq(acme.events)).toEqual(['CALL_RECEIVED:c1', 'TOOL_PRE:c1#1', 'TOOL_POST:c1#1', 'TURN_END', 'BREAKER_STATE']);
    expect(acme.events[4]).toMatchObject({ tool: 'echo', attributes: { 'dispatch.breaker.state': 'half_open' } });
    expect(globex.events.filter((e) => e.kind === EventKind.TURN_END)).toHaveLength(1);
    expect(globex.events.filter((e) => e.kind === EventKind.BREAKER_STATE).map((e) => e.tool)).toEqual(['private_tool', 'echo']);
    const acmeTraces = new Set(acme.events.filter((e) => e.sessionId !== '').map((e) => e.traceId));
    expect(globex.events.some((e) => acmeTraces.has(e.traceId))).toBe(false);
  } finally {
    acme.close();
    globex.close();
  }
});

test('Subscribe needs the subscribe scope, a valid filter, and room under the per-tenant limit', async () => {
  await expect(tapEvents(d.address, {}, auth('tok-nosub'))).rejects.toMatchObject({ code: status.PERMISSION_DENIED });
  await expect(tapEvents(d.address, {}, auth('wrong'))).rejects.toMatchObject({ code: status.UNAUTHENTICATED });
  await expect(tapEvents(d.address, { kinds: [99 as EventKind] }, ACME)).rejects.toMatchObject({ code: status.INVALID_ARGUMENT, details: 'unknown event kind 99' });
  const first = await tapEvents(d.address, {}, ACME);
  const second = await tapEvents(d.address, {}, ACME);
  const full = await tapEvents(d.address, {}, ACME);
  await expect(tapEvents(d.address, {}, ACME)).rejects.toMatchObject({ code: status.RESOURCE_EXHAUSTED });
  const otherTenant = await tapEvents(d.address, {}, GLOBEX);
  first.close();
  const deadline = Date.now() + 5_000;
  let third;
  while (!third) {
    third = await tapEvents(d.address, {}, ACME).catch((e: { code: number }) => {
      if (e.code !== status.RESOURCE_EXHAUSTED || Date.now() > deadline) throw e;
      return undefined;
    });
  }
  for (const tap of [second, full, otherTenant, third]) tap.close();
});

test('shutdown ends open streams with OK instead of holding the server for its grace period', async () => {
  const app = await startApp(YAML);
  const tap = await tapEvents(app.address, {}, ACME);
  const started = Date.now();
  await app.app.close(10_000);
  expect(Date.now() - started).toBeLessThan(5_000);
  await tap.waitFor(() => tap.status() !== undefined);
  expect(tap.status()!.code).toBe(status.OK);
  tap.close();
  app.dispatch.close();
  app.registry.close();
});
