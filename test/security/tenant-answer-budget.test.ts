import type { ServerResponse } from 'node:http';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DEFAULT_LIMITS, resolveLimits } from '../../src/options';
import { startToolServer, type ToolServer } from '../helpers/servers';
import { authYaml, bearer, startAuthApp, type AuthApp, type TestToken } from './support/auth-app';

// limits.max_answer_bytes_in_flight bounds the bytes of HTTP answers read at once on a replica, and
// limits.max_answer_bytes_in_flight_per_tenant (a quarter of it by default) what one tenant's calls
// read: a tenant whose tool answers a little and then stalls holds at most its share, and another
// tenant's calls, to the same tools or others, are read at once. The budgets are shrunk so that the
// test moves a few KB: 4,000 bytes, 1,000 per tenant.

const HOG: TestToken = { token: 'tok-hog', tenant: 'hog', scopes: ['dispatch'] };
const VICTIM: TestToken = { token: 'tok-victim', tenant: 'victim', scopes: ['dispatch'] };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let tools: ToolServer;
let app: AuthApp;
let charged = 0;
const stalled: ServerResponse[] = [];

beforeAll(async () => {
  tools = await startToolServer({
    // 900 bytes, then nothing more: the connection stays open until the test ends it.
    '/stall': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).write('s'.repeat(900));
      stalled.push(res);
    },
    // 3,900 bytes, then nothing more: nearly the whole total in one answer.
    '/big': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).write('b'.repeat(3900));
      stalled.push(res);
    },
    '/medium': (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('m'.repeat(600)),
    '/charge': (_req, res) => {
      charged++;
      res.writeHead(200).end('{"charged":true}');
    },
  });
  // The config file's tools (tenant ""): each call's answer counts for the tenant that called it.
  const tool = (name: string, effect: string, timeoutMs: number) =>
    `  - { name: ${name}, effect: ${effect}, concurrency_safe: true, timeout_ms: ${timeoutMs}, retry: { max_attempts: 1 }, memoize_ttl_seconds: 0, http: { url: "${tools.url}/${name}" } }\n`;
  app = await startAuthApp(
    `${authYaml([HOG, VICTIM])}limits: { max_answer_bytes_in_flight: 4000 }\ntools:\n${tool('stall', 'read_only', 8000)}${tool('big', 'read_only', 8000)}${tool('medium', 'read_only', 800)}${tool('charge', 'side_effect', 1500)}`,
  );
});
afterAll(async () => {
  for (const res of stalled) res.destroy();
  await app?.close();
  await tools?.close();
});

test("one tenant's stalled answers hold only its share: another tenant's calls are read at once, and its side effect runs once", async () => {
  // hog's five stalled answers would hold 4,500 bytes: the whole budget, were it one for all.
  const hogTurns = Array.from({ length: 5 }, (_, i) =>
    app.dispatch.dispatch({ sessionId: `hog${i}`, calls: [{ id: `h${i}`, name: 'stall', arguments: `{"i":${i}}` }] }, bearer(HOG.token)).catch((e: unknown) => e),
  );
  for (let i = 0; i < 50 && tools.count('/stall') < 5; i++) await sleep(20);
  expect(tools.count('/stall')).toBe(5);
  await sleep(200); // their first chunks arrive and are taken (or wait for hog's share)

  const started = Date.now();
  const [charge, medium] = await Promise.all([
    app.dispatch.dispatch({ sessionId: 'pay', calls: [{ id: 'c1', name: 'charge', arguments: '{"amount":5}' }] }, bearer(VICTIM.token)),
    app.dispatch.dispatch({ sessionId: 'look', calls: [{ id: 'm1', name: 'medium', arguments: '{}' }] }, bearer(VICTIM.token)),
  ]);
  expect(charge.results[0]).toMatchObject({ isError: false, output: '{"charged":true}' });
  expect(medium.results[0]).toMatchObject({ isError: false, output: 'm'.repeat(600) });
  expect(Date.now() - started).toBeLessThan(1000);
  expect(charged).toBe(1);

  // hog's own answer waits for its share (900 held + 600 > 1,000), until its timeout.
  const hogMedium = await app.dispatch.dispatch({ sessionId: 'hog-look', calls: [{ id: 'm2', name: 'medium', arguments: '{"hog":1}' }] }, bearer(HOG.token));
  expect(hogMedium.results[0]!.error?.kind).toBe(ErrorKind.TIMEOUT);

  for (const res of stalled) res.destroy();
  await Promise.all(hogTurns);
}, 20_000);

test("one tenant's single stalled answer holding nearly the whole total does not hold up another tenant's reads", async () => {
  // hog's only answer is its tenant's oldest, which passes its share: 3,900 of the 4,000 bytes.
  // victim holds less than its equal split (2,000 bytes, 2 tenants reading): its answer is read at
  // once, past the total. (It waited for the total until its 800 ms timeout: TIMEOUT.)
  const hogTurn = app.dispatch.dispatch({ sessionId: 'hog-big', calls: [{ id: 'b1', name: 'big', arguments: '{}' }] }, bearer(HOG.token)).catch((e: unknown) => e);
  for (let i = 0; i < 50 && tools.count('/big') < 1; i++) await sleep(20);
  expect(tools.count('/big')).toBe(1);
  await sleep(200); // its 3,900 bytes arrive and are taken

  const started = Date.now();
  const medium = await app.dispatch.dispatch({ sessionId: 'look-big', calls: [{ id: 'm3', name: 'medium', arguments: '{"big":1}' }] }, bearer(VICTIM.token));
  expect(medium.results[0]).toMatchObject({ isError: false, output: 'm'.repeat(600) });
  expect(Date.now() - started).toBeLessThan(700);

  for (const res of stalled) res.destroy();
  await hogTurn;
}, 20_000);

test('the share is a quarter of the total unless set, and at most the total', () => {
  expect(DEFAULT_LIMITS.maxAnswerBytesInFlightPerTenant).toBe(16 * 1024 * 1024);
  expect(resolveLimits({ maxAnswerBytesInFlight: 4000 }).maxAnswerBytesInFlightPerTenant).toBe(1000);
  expect(resolveLimits({ maxAnswerBytesInFlight: 2 }).maxAnswerBytesInFlightPerTenant).toBe(1);
  expect(resolveLimits({ maxAnswerBytesInFlightPerTenant: 4000 }).maxAnswerBytesInFlightPerTenant).toBe(4000);
  expect(() => resolveLimits({ maxAnswerBytesInFlight: 4000, maxAnswerBytesInFlightPerTenant: 4001 })).toThrow(
    'limits.maxAnswerBytesInFlightPerTenant must be at most the limit on all tenants together (4000), got 4001',
  );
});
