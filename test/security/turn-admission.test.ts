import * as grpc from '@grpc/grpc-js';
import { DEFAULT_LIMITS } from '../../src/options';
import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { errorReason } from '../guards/helpers';
import { metricsPortLogger } from '../telemetry/metrics-app';
import { authYaml, bearer, statusOf, startAuthApp, type AuthApp } from './support/auth-app';

// A replica runs a bounded number of Dispatch RPCs at once, in all and per tenant: one more is
// refused RESOURCE_EXHAUSTED (reason OVERLOADED) before any of its calls runs, and once the turns
// ahead end, new ones are let in again. A real HTTP tool holds the turns open; the tool server
// counts what reached it.

let tools: ToolServer;
let app: AuthApp;
const ACME = { token: 'tok-acme', tenant: 'acme', scopes: ['dispatch'] };
const GLOBEX = { token: 'tok-globex', tenant: 'globex', scopes: ['dispatch'] };

const metrics = metricsPortLogger();

beforeAll(async () => {
  tools = await startToolServer({ '/slow': json({ ok: true }, 400) });
  app = await startAuthApp(`${authYaml([ACME, GLOBEX])}limits: { max_turns_in_flight: 3, max_turns_per_tenant: 2, max_argument_chars_in_flight: 1000 }
tools:
  - name: slow
    effect: read_only
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/slow" }
`, { logger: metrics.logger, daemon: { metricsListen: '127.0.0.1:0' } });
});
afterAll(async () => {
  await app.close();
  await tools.close();
});

let n = 0;
const turn = (token: string) => app.dispatch.dispatch({ sessionId: `s${++n}`, calls: [{ id: 'c', name: 'slow', arguments: `{"n":${n}}` }] }, bearer(token));

test('the defaults bound every tenant together and each alone', () => {
  expect(DEFAULT_LIMITS).toMatchObject({ maxTurnsInFlight: 1024, maxTurnsPerTenant: 512, maxArgumentCharsInFlight: 32 * 1024 * 1024 });
});

test('a tenant past its turns is refused at once, nothing run; another tenant is not; all together are bounded too', async () => {
  const running = [turn(ACME.token), turn(ACME.token)];
  await new Promise((r) => setTimeout(r, 100));
  const third = await statusOf(turn(ACME.token));
  expect(third).toEqual({ code: grpc.status.RESOURCE_EXHAUSTED, details: 'tenant "acme" is running its limit of 2 turns at once on this dispatch replica (limits.max_turns_per_tenant); nothing was run, try again shortly' });
  expect(errorReason(await turn(ACME.token).catch((e: unknown) => e))).toBe('OVERLOADED');

  // globex takes the third place of the replica; a fourth turn finds it full.
  const other = turn(GLOBEX.token);
  await new Promise((r) => setTimeout(r, 100));
  expect(await statusOf(turn(GLOBEX.token))).toEqual({ code: grpc.status.RESOURCE_EXHAUSTED, details: 'this dispatch replica is running its limit of 3 turns at once (limits.max_turns_in_flight); nothing was run, try again shortly' });
  // Prometheus shows the turns running and those refused.
  const m = await metrics.scrape();
  expect(m.value('dispatch_turns_in_flight')).toBe(3);
  expect(m.value('dispatch_turns_refused_total')).toBe(3);

  for (const r of await Promise.all([...running, other])) expect(r.results[0]!.isError).toBe(false);
  expect(tools.count('/slow')).toBe(3);

  // Their places are free again, failed turns' included.
  const again = await Promise.all([turn(ACME.token), turn(ACME.token), turn(GLOBEX.token)]);
  expect(again.every((r) => !r.results[0]!.isError)).toBe(true);
  expect(tools.count('/slow')).toBe(6);
});

test('a turn its client cancels gives its place back', async () => {
  const controller = new AbortController();
  const cancelled = app.dispatch.dispatch({ sessionId: 'cancel-me', calls: [{ id: 'c', name: 'slow', arguments: '{"cancel":1}' }] }, bearer(ACME.token, { signal: controller.signal }));
  await new Promise((r) => setTimeout(r, 100));
  controller.abort();
  expect((await statusOf(cancelled)).code).toBe(grpc.status.CANCELLED);
  // The client knows at once; the server unwinds the turn when the cancel reaches it.
  await new Promise((r) => setTimeout(r, 200));
  // Both places of acme are free: had the cancelled turn kept its own, one of these would be refused.
  const both = await Promise.all([turn(ACME.token), turn(ACME.token)]);
  expect(both.every((r) => !r.results[0]!.isError)).toBe(true);
});

test('turns whose arguments would take the replica past its characters in flight are refused; a turn alone always runs', async () => {
  // Arguments of `chars` characters in all: {"pad":"xxx..."}.
  const sized = (token: string, chars: number) => app.dispatch.dispatch({ sessionId: `s${++n}`, calls: [{ id: 'c', name: 'slow', arguments: `{"pad":"${'x'.repeat(chars - 10)}"}` }] }, bearer(token));
  const before = tools.count('/slow');
  const big = sized(ACME.token, 600);
  await new Promise((r) => setTimeout(r, 100));
  // Each turn's characters: its arguments, and its session id, call id and tool name.
  expect(await statusOf(sized(GLOBEX.token, 500))).toEqual({
    code: grpc.status.RESOURCE_EXHAUSTED,
    details: `the turns running on this dispatch replica hold ${600 + `s${n - 1}`.length + 5} characters of calls; with this turn's ${500 + `s${n}`.length + 5} that would pass its limit of 1000 (limits.max_argument_chars_in_flight); nothing was run, try again shortly`,
  });
  // Offered tools count too: a turn with small arguments but 500 characters of offered tool names.
  const offering = app.dispatch.dispatch({ sessionId: `s${++n}`, offeredTools: ['slow', ...['a', 'b', 'c', 'd'].map((c) => c.repeat(124))], calls: [{ id: 'c', name: 'slow', arguments: '{}' }] }, bearer(GLOBEX.token));
  expect((await statusOf(offering)).code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  // One that fits is let in beside it.
  const small = sized(GLOBEX.token, 300);
  for (const r of await Promise.all([big, small])) expect(r.results[0]!.isError).toBe(false);
  expect(tools.count('/slow')).toBe(before + 2);
  // Their characters are given back: the same two fit again.
  const again = [sized(ACME.token, 600), sized(GLOBEX.token, 300)];
  for (const r of await Promise.all(again)) expect(r.results[0]!.isError).toBe(false);
  // Alone, a turn larger than the whole limit still runs (it would otherwise never run).
  expect((await sized(ACME.token, 1500)).results[0]!.isError).toBe(false);
  expect(tools.count('/slow')).toBe(before + 5);
});
