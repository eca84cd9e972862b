import * as grpc from '@grpc/grpc-js';
import type { ServerResponse } from 'node:http';
import { DispatchMode } from '../../gen/dispatch/v1/dispatch_pb';
import { parseConfig } from '../../src/config';
import { resolveLimits } from '../../src/options';
import { peakCalls } from '../../src/server/peak-calls';
import { createParallelDispatcher } from '../../src/waves';
import { errorReason } from '../guards/helpers';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { until } from '../helpers/until';
import { authYaml, bearer, statusOf, startAuthApp, type AuthApp } from '../security/support/auth-app';
import { metricsPortLogger } from '../telemetry/metrics-app';

// A replica bounds the tool calls its turns may run at once (limits.max_calls_in_flight), in all
// and per tenant: each turn holds its peak from admission to its end, 1 for a sequential turn and
// min(calls, max_concurrency) for a parallel one, and a turn that would pass a bound is refused
// RESOURCE_EXHAUSTED (reason OVERLOADED) before any of its calls runs. Without it 170 parallel
// turns of 128 calls to a slow HTTP tool ran the replica out of heap. A real HTTP tool holds its
// requests until the test opens its gate, and records what reached it.

const ACME = { token: 'tok-acme', tenant: 'acme', scopes: ['dispatch'] };
const GLOBEX = { token: 'tok-globex', tenant: 'globex', scopes: ['dispatch'] };
const INITECH = { token: 'tok-initech', tenant: 'initech', scopes: ['dispatch'] };

let openGate: () => void = () => undefined;
let gate = Promise.resolve();
function closeGate(): void {
  gate = new Promise<void>((resolve) => (openGate = resolve));
}
async function held(_request: unknown, response: ServerResponse): Promise<void> {
  await gate;
  if (!response.destroyed) response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
}

let tools: ToolServer;
let app: AuthApp;
const metrics = metricsPortLogger();

beforeAll(async () => {
  tools = await startToolServer({ '/held': held });
  // 16 calls at once on the replica; with authentication, half of them (8) per tenant.
  app = await startAuthApp(`${authYaml([ACME, GLOBEX, INITECH])}limits: { max_calls_in_flight: 16 }
tools:
  - name: slow
    effect: read_only
    concurrency_safe: true
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/held" }
`, { logger: metrics.logger, daemon: { metricsListen: '127.0.0.1:0' } });
});
afterAll(async () => {
  openGate();
  await app.close();
  await tools.close();
});
beforeEach(closeGate);
afterEach(async () => {
  openGate();
  await until(async () => ((await callsInFlight()) === 0 ? true : undefined), 'the turns to end');
});

const callsInFlight = async () => (await metrics.scrape()).value('dispatch_turns_calls_in_flight') ?? 0;
/** Requests of turn `name` that reached the tool. */
const reached = (name: string) => tools.received.filter((r) => (r.body.arguments as { turn?: string } | undefined)?.turn === name).length;

/** A turn expected to be refused ends by its deadline if it is let in (it waits at the gate). */
const REFUSED = { deadlineMs: 2_000 };

/** A turn `name` of `count` calls of the held tool, parallel unless `sequential`. */
function turn(token: string, name: string, count: number, options: { sequential?: boolean; maxConcurrency?: number; deadlineMs?: number } = {}) {
  const calls = Array.from({ length: count }, (_, i) => ({ id: `${name}-${i}`, name: 'slow', arguments: JSON.stringify({ turn: name, i }) }));
  const mode = options.sequential ? DispatchMode.SEQUENTIAL : DispatchMode.PARALLEL;
  return app.dispatch.dispatch({ sessionId: `s-${name}`, mode, maxConcurrency: options.maxConcurrency ?? 0, calls }, bearer(token, options.deadlineMs ? { deadlineMs: options.deadlineMs } : {}));
}

test('the defaults: 8,192 calls at once (1,024 turns of the default concurrency 8), half per tenant with auth, the whole without', () => {
  expect([resolveLimits({}).maxCallsInFlight, resolveLimits({}).maxCallsInFlightPerTenant, resolveLimits({}, { singleTenant: true }).maxCallsInFlightPerTenant]).toEqual([8192, 4096, 8192]);
  expect(resolveLimits({ maxCallsInFlight: 16 }).maxCallsInFlightPerTenant).toBe(8);
  expect(() => parseConfig('limits: { max_calls_in_flight: 16, max_calls_in_flight_per_tenant: 17 }', 'test.yaml')).toThrow(
    'limits.max_calls_in_flight_per_tenant: must be at most the limit on all tenants together (16), got 17',
  );
  expect(() => parseConfig('limits: { max_calls_in_flight: 0 }', 'test.yaml')).toThrow(/limits\.max_calls_in_flight: /);
});

test('a turn holds 1 call when sequential, min(calls, max_concurrency) when parallel', () => {
  const parallel = createParallelDispatcher();
  const request = (mode: DispatchMode, count: number, maxConcurrency: number) => ({ mode, maxConcurrency, calls: Array.from({ length: count }, () => ({ id: 'c', name: 't', arguments: '{}' })) }) as unknown as Parameters<typeof peakCalls>[0];
  expect(peakCalls(request(DispatchMode.SEQUENTIAL, 100, 50), parallel)).toBe(1);
  expect(peakCalls(request(DispatchMode.PARALLEL, 100, 0), parallel)).toBe(8);
  expect(peakCalls(request(DispatchMode.PARALLEL, 100, 4_000_000_000), parallel)).toBe(100);
  expect(peakCalls(request(DispatchMode.PARALLEL, 100, 3), parallel)).toBe(3);
  expect(peakCalls(request(DispatchMode.PARALLEL, 1, 50), parallel)).toBe(1);
  expect(peakCalls(request(DispatchMode.PARALLEL, 100, 50), undefined)).toBe(1);
  expect(peakCalls(request(DispatchMode.PARALLEL, 100, 0), createParallelDispatcher({ defaultMaxConcurrency: 32 }))).toBe(32);
});

test('turns past the calls in flight, a tenant\'s or all, are refused before any call reaches the tool; a sequential turn holds 1', async () => {
  const running = [turn(ACME.token, 'a', 6)];
  await until(() => (reached('a') === 6 ? true : undefined), 'turn a at the tool');

  // acme holds 6 of its 8: a parallel turn of 3 would take it to 9.
  const b = await statusOf(turn(ACME.token, 'b', 3, REFUSED));
  expect(b).toEqual({
    code: grpc.status.RESOURCE_EXHAUSTED,
    details: 'the turns of tenant "acme" running on this dispatch replica may run 6 tool calls at once; with this turn\'s 3 that would pass its limit of 8 (limits.max_calls_in_flight_per_tenant); nothing was run, try again shortly',
  });
  expect(errorReason(await turn(ACME.token, 'b2', 3, REFUSED).catch((e: unknown) => e))).toBe('OVERLOADED');

  // A sequential turn of 5 calls runs one at a time: it holds 1 (acme 7).
  running.push(turn(ACME.token, 'c', 5, { sequential: true }));
  // A max_concurrency past the turn's calls is accepted and holds its calls (globex 7, all 14).
  running.push(turn(GLOBEX.token, 'd', 7, { maxConcurrency: 4_000_000_000 }));
  await until(() => (reached('c') === 1 && reached('d') === 7 ? true : undefined), 'turns c and d at the tool');
  expect(await callsInFlight()).toBe(14);

  // initech holds nothing, but the replica's 14 and a turn of 3 would pass 16.
  expect(await statusOf(turn(INITECH.token, 'e', 3, { ...REFUSED, maxConcurrency: 3 }))).toEqual({
    code: grpc.status.RESOURCE_EXHAUSTED,
    details: "the turns running on this dispatch replica may run 14 tool calls at once; with this turn's 3 that would pass its limit of 16 (limits.max_calls_in_flight); nothing was run, try again shortly",
  });
  // One of 2 fits (16).
  running.push(turn(INITECH.token, 'f', 2));
  await until(() => (reached('f') === 2 ? true : undefined), 'turn f at the tool');
  expect(await callsInFlight()).toBe(16);

  expect(['b', 'b2', 'e'].map(reached)).toEqual([0, 0, 0]);
  expect(tools.count('/held')).toBe(6 + 1 + 7 + 2);

  openGate();
  for (const r of await Promise.all(running)) expect(r.results.every((result) => !result.isError)).toBe(true);
  expect(reached('c')).toBe(5);
  // The places are given back: the tenants' whole shares fit again.
  await until(async () => ((await callsInFlight()) === 0 ? true : undefined), 'the calls to be given back');
  const again = await Promise.all([turn(ACME.token, 'g', 8), turn(GLOBEX.token, 'h', 8)]);
  for (const r of again) expect(r.results.every((result) => !result.isError)).toBe(true);
});

test('a turn alone is let in whatever its width', async () => {
  const wide = turn(INITECH.token, 'wide', 20, { maxConcurrency: 20 });
  await until(() => (reached('wide') === 20 ? true : undefined), 'the wide turn at the tool');
  expect(await callsInFlight()).toBe(20);
  // Beside it, even a sequential turn passes the replica's 16.
  expect((await statusOf(turn(ACME.token, 'beside', 1, { ...REFUSED, sequential: true }))).code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  openGate();
  expect((await wide).results.every((result) => !result.isError)).toBe(true);
  expect(reached('beside')).toBe(0);
});

test('a turn ended by a hard error gives its calls back once they have unwound', async () => {
  // The deadline ends the turn while its 8 calls wait at the tool; they are aborted.
  const ended = await statusOf(turn(ACME.token, 'late', 8, { deadlineMs: 500 }));
  expect(ended.code).toBe(grpc.status.DEADLINE_EXCEEDED);
  expect(reached('late')).toBe(8);
  await until(async () => ((await callsInFlight()) === 0 ? true : undefined), 'the aborted calls to be given back', 7_000);
  // acme's whole share again, while the gate is still closed.
  const next = turn(ACME.token, 'next', 8);
  await until(() => (reached('next') === 8 ? true : undefined), 'the next turn at the tool');
  openGate();
  expect((await next).results.every((result) => !result.isError)).toBe(true);
});

test('without authentication the one tenant may take the whole limit, and a refusal names it', async () => {
  const single = await startApp(`limits: { max_calls_in_flight: 16 }
tools:
  - { name: slow, effect: read_only, concurrency_safe: true, input_schema: '{"type":"object"}', http: { url: "${tools.url}/held" } }
`);
  try {
    const call = (name: string, count: number, deadlineMs?: number) =>
      single.dispatch.dispatch({ sessionId: `s-${name}`, mode: DispatchMode.PARALLEL, calls: Array.from({ length: count }, (_, i) => ({ id: `${name}-${i}`, name: 'slow', arguments: JSON.stringify({ turn: name, i }) })) }, deadlineMs ? { deadlineMs } : {});
    const running = [call('one-a', 8), call('one-b', 8)];
    await until(() => (reached('one-a') + reached('one-b') === 16 ? true : undefined), 'both turns at the tool');
    expect(single.server.turns.callsInFlight).toBe(16);
    expect(await statusOf(call('one-c', 2, REFUSED.deadlineMs))).toEqual({
      code: grpc.status.RESOURCE_EXHAUSTED,
      details: "the turns running on this dispatch replica may run 16 tool calls at once; with this turn's 2 that would pass its limit of 16 (limits.max_calls_in_flight); nothing was run, try again shortly",
    });
    expect(reached('one-c')).toBe(0);
    openGate();
    for (const r of await Promise.all(running)) expect(r.results.every((result) => !result.isError)).toBe(true);
    expect(single.server.turns.callsInFlight).toBe(0);
  } finally {
    await single.close();
  }
});
