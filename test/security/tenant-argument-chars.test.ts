import * as grpc from '@grpc/grpc-js';
import { DEFAULT_LIMITS, resolveLimits } from '../../src/options';
import { parseConfig } from '../../src/config';
import { errorReason } from '../guards/helpers';
import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { authYaml, bearer, startAuthApp, statusOf, type AuthApp, type TestToken } from './support/auth-app';

// limits.max_argument_chars_in_flight bounds the characters of calls held by the turns running on a
// replica, and limits.max_argument_chars_in_flight_per_tenant (three quarters of it by default) what
// one tenant's running turns hold: a tenant's large turns are refused past its share, before any
// call runs, and leave room for another tenant's. Shrunk to 3,000 characters, 2,250 per tenant.

const HOG: TestToken = { token: 'tok-hog', tenant: 'hog', scopes: ['dispatch'] };
const VICTIM: TestToken = { token: 'tok-victim', tenant: 'victim', scopes: ['dispatch'] };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let tools: ToolServer;
let app: AuthApp;

beforeAll(async () => {
  tools = await startToolServer({ '/slow': json({ ok: true }, 600) });
  app = await startAuthApp(`${authYaml([HOG, VICTIM])}limits: { max_argument_chars_in_flight: 3000 }
tools:
  - { name: slow, effect: read_only, concurrency_safe: true, input_schema: '{"type":"object"}', http: { url: "${tools.url}/slow" } }
`);
});
afterAll(async () => {
  await app?.close();
  await tools?.close();
});

let n = 0;
// A turn of about `chars` characters: its arguments {"pad":"xxx..."}, plus its ids and tool name.
const sized = (token: string, chars: number) =>
  app.dispatch.dispatch({ sessionId: `s${++n}`, calls: [{ id: 'c', name: 'slow', arguments: `{"pad":"${'x'.repeat(chars - 10)}"}` }] }, bearer(token));

test("a tenant's turns past its share of the characters are refused, nothing run; another tenant's still run", async () => {
  const before = tools.count('/slow');
  const first = sized(HOG.token, 1200);
  await sleep(100);
  // 1,200 more would take hog past 2,250, though the replica would hold 2,400 of its 3,000.
  const second = await statusOf(sized(HOG.token, 1200));
  expect(second.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  expect(second.details).toMatch(
    /^the turns of tenant "hog" running on this dispatch replica hold 12\d\d characters of calls; with this turn's 12\d\d that would pass its limit of 2250 \(limits\.max_argument_chars_in_flight_per_tenant\); nothing was run, try again shortly$/,
  );
  expect(errorReason(await sized(HOG.token, 1200).catch((e: unknown) => e))).toBe('OVERLOADED');
  // One within hog's share is let in beside it; victim's turn fits in the quarter left.
  const small = sized(HOG.token, 900);
  const victim = sized(VICTIM.token, 700);
  for (const r of await Promise.all([first, small, victim])) expect(r.results[0]!.isError).toBe(false);
  expect(tools.count('/slow')).toBe(before + 3);
});

test("a tenant's turn alone runs past its share (the replica's bound still applies)", async () => {
  const before = tools.count('/slow');
  const victim = sized(VICTIM.token, 400);
  await sleep(100);
  // hog runs nothing, so its turn may pass its share; but 2,700 with victim's 400 pass the replica's 3,000.
  expect((await statusOf(sized(HOG.token, 2700))).details).toMatch(/\(limits\.max_argument_chars_in_flight\)/);
  const hog = sized(HOG.token, 2400);
  for (const r of await Promise.all([victim, hog])) expect(r.results[0]!.isError).toBe(false);
  expect(tools.count('/slow')).toBe(before + 2);
});

test('the share is three quarters of the total unless set, and at most the total', () => {
  expect(DEFAULT_LIMITS).toMatchObject({ maxArgumentCharsInFlight: 32 * 1024 * 1024, maxArgumentCharsInFlightPerTenant: 24 * 1024 * 1024 });
  expect(resolveLimits({}).maxArgumentCharsInFlightPerTenant).toBe(24 * 1024 * 1024);
  expect(resolveLimits({ maxArgumentCharsInFlight: 3000 }).maxArgumentCharsInFlightPerTenant).toBe(2250);
  expect(resolveLimits({ maxArgumentCharsInFlight: 1 }).maxArgumentCharsInFlightPerTenant).toBe(1);
  expect(resolveLimits({ maxArgumentCharsInFlight: 3000, maxArgumentCharsInFlightPerTenant: 3000 }).maxArgumentCharsInFlightPerTenant).toBe(3000);
  expect(() => parseConfig('limits: { max_argument_chars_in_flight: 3000, max_argument_chars_in_flight_per_tenant: 3001 }\n', 'dispatch.yaml')).toThrow(
    'limits.max_argument_chars_in_flight_per_tenant: must be at most the limit on all tenants together (3000), got 3001',
  );
});
