import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { CHECK_BURST_MS, CHECK_REFILL_MS_PER_SECOND } from '../../src/registry/check-time';
import { startApp } from '../helpers/servers';

// A hostile tenant's probe: a registered schema applying an allOf of thousands of subschemas to
// each item (within the registration bounds) and a turn of 16 calls of 15,000 items each: every
// call stopped at its 1 s bound, one after the other, and the turn held the event loop every tenant
// shares for 20 s (another tenant's echo took 9.6 s; health checks failed for 9 s, so a liveness
// probe restarts the pod). Now a tenant's costly checks share an allowance of 1 s at once, filling
// again at 250 ms a second: past it, a check stops at once and the call is refused UNAVAILABLE,
// recoverable, with retry_after_ms, and another tenant's checks keep their own allowance.

jest.setTimeout(60_000);

const costly = { allOf: Array.from({ length: 3_000 }, (_, i) => ({ maxLength: i + 1 })) };
const schema = JSON.stringify({ type: 'object', properties: { a: { type: 'array', items: costly } } });
const args = JSON.stringify({ a: Array.from({ length: 40_000 }, () => 'x') });
const TOKENS = { heavy: 'heavy-token', quiet: 'quiet-token' };
const sha = (text: string) => require('node:crypto').createHash('sha256').update(text).digest('hex') as string;
const config = `tools:
  - { name: costly, input_schema: '${schema}', effect: read_only, builtin: { name: echo } }
  - { name: plain, input_schema: '{"type":"object"}', effect: read_only, builtin: { name: echo } }
auth: { tokens: [ { tenant: heavy, sha256: "${sha(TOKENS.heavy)}", scopes: [dispatch] }, { tenant: quiet, sha256: "${sha(TOKENS.quiet)}", scopes: [dispatch] } ] }
`;

let t: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  t = await startApp(config);
});
afterAll(() => t?.close());

const turn = (token: string, calls: number, mode = 1) =>
  t.dispatch.dispatch({ sessionId: 's', mode, calls: Array.from({ length: calls }, (_, i) => ({ id: `c${i}`, name: 'costly', arguments: args })) }, { metadata: { authorization: `Bearer ${token}` } });

test("a tenant's turn of costly checks holds the event loop about its allowance, not a second per call; the calls past it are refused UNAVAILABLE, to call again later", async () => {
  const started = performance.now();
  const { results } = await turn(TOKENS.heavy, 8);
  const took = performance.now() - started;
  // Before: 8 s and more (1 s per call). The allowance (1 s), what fills meanwhile, and the turn's own work.
  expect(took).toBeLessThan(CHECK_BURST_MS + 1_500);
  expect(results[0]!.error).toMatchObject({ kind: ErrorKind.INVALID_ARGUMENTS });
  expect(results[0]!.error?.message).toMatch(/^invalid arguments: checking stopped after 1000 ms: the arguments are too costly to check/);
  const paused = results.slice(1).filter((r) => r.error?.kind === ErrorKind.UNAVAILABLE);
  expect(paused.length).toBeGreaterThanOrEqual(6);
  expect(paused[0]!.error).toMatchObject({
    recoverable: true,
    message: `dispatch did not finish checking the arguments against the tool's schema: this tenant's calls used their allowance of time for checking costly arguments (${CHECK_BURST_MS} ms at once, ${CHECK_REFILL_MS_PER_SECOND} ms more each second); the tool was not executed`,
  });
  expect(Number(paused[0]!.error!.retryAfterMs)).toBeGreaterThanOrEqual(1_000);
  expect(Number(paused[0]!.error!.retryAfterMs)).toBeLessThanOrEqual(((CHECK_BURST_MS + 200) * 1000) / CHECK_REFILL_MS_PER_SECOND);
  expect(paused[0]!.output).toContain('Try again in');
  expect(results.every((r) => r.attempts <= 1)).toBe(true);
});

const small = (token: string, name = 'costly') => t.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name, arguments: '{"a":["x"]}' }] }, { metadata: { authorization: `Bearer ${token}` } }).then((r) => r.results[0]!);

test("once its allowance is spent, a tool whose checks have stopped for their time is refused before any check, a small call too; another tool's calls are checked as ever", async () => {
  await turn(TOKENS.heavy, 2);
  // Checked, a small call never looks at the clock: it is refused for the tool, not for its own cost.
  expect((await small(TOKENS.heavy)).error).toMatchObject({ kind: ErrorKind.UNAVAILABLE, recoverable: true });
  expect(await small(TOKENS.heavy, 'plain')).toMatchObject({ isError: false });
  expect(await small(TOKENS.quiet)).toMatchObject({ isError: false });
  const started = performance.now();
  const { results } = await turn(TOKENS.heavy, 16);
  expect(performance.now() - started).toBeLessThan(2_000);
  expect(results.map((r) => r.error?.kind)).toEqual(Array(16).fill(ErrorKind.UNAVAILABLE));
});

test("another tenant's check keeps its own allowance while one tenant's is spent", async () => {
  await turn(TOKENS.heavy, 4);
  const { results } = await turn(TOKENS.quiet, 1);
  expect(results[0]!.error?.message).toMatch(/^invalid arguments: checking stopped after 1000 ms: the arguments are too costly to check against the tool's schema; the tool was not executed$/);
});

test('the allowance fills again: once it is full, a costly call runs to its own bound', async () => {
  await turn(TOKENS.heavy, 3);
  await new Promise((r) => setTimeout(r, (CHECK_BURST_MS * 1000) / CHECK_REFILL_MS_PER_SECOND + 200));
  expect(await small(TOKENS.heavy)).toMatchObject({ isError: false });
  const { results } = await turn(TOKENS.heavy, 1);
  expect(results[0]!.error?.message).toMatch(/^invalid arguments: checking stopped after 1000 ms/);
});
