import { status, type ServiceError } from '@grpc/grpc-js';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { json, maxInFlight, startToolServer, type ToolServer } from '../helpers/servers';
import { startMetricsApp, type MetricsApp } from '../telemetry/metrics-app';

// `concurrency:` policies cap how many attempts of a tool run at once on a replica: the others
// wait up to wait_ms (within their deadline) for a slot, first come first served, and are refused
// UNAVAILABLE before execution when none comes, which the retry policy may retry. Real HTTP tools
// that record when each request started and ended, through the whole app over gRPC.

jest.setTimeout(30_000);

const toolsYaml = (url: string) => `
tools:
${['capped', 'queued', 'short_wait', 'retried', 'hang']
  .map(
    (name) => `  - name: ${name}
    effect: read_only
    input_schema: '{"type":"object"}'
    http: { url: "${url}/${name}" }
${name === 'retried' ? '' : '    retry: { max_attempts: 1 }\n'}${name === 'hang' ? '    timeout_ms: 300\n' : ''}`,
  )
  .join('')}  - name: write
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${url}/write" }
policies:
  - match: capped
    concurrency: { max_in_flight: 2 }
  - match: queued
    concurrency: { max_in_flight: 2, wait_ms: 5000 }
  - match: retried
    concurrency: { max_in_flight: 1 }
  - match: short_wait
    concurrency: { max_in_flight: 1, wait_ms: 200 }
  - match: hang
    concurrency: { max_in_flight: 1 }
  - match: write
    concurrency: { max_in_flight: 1 }
`;

let tools: ToolServer;
let d: MetricsApp;
let calls = 0;
beforeAll(async () => {
  tools = await startToolServer({
    '/capped': json({ ok: true }, 300),
    '/queued': json({ ok: true }, 300),
    '/short_wait': json({ ok: true }, 600),
    '/retried': json({ ok: true }, 100),
    '/hang': () => new Promise(() => undefined),
    '/write': json({ written: true }, 100),
  });
  d = await startMetricsApp(toolsYaml(tools.url));
});
afterAll(async () => {
  await d.close();
  await tools.close();
});
beforeEach(() => tools.received.splice(0));

const call = (name: string, signal?: AbortSignal) => {
  const id = `c${++calls}`;
  return d.dispatch.dispatch({ sessionId: `s${calls}`, calls: [{ id, name, arguments: `{"n":${calls}}` }] }, { signal }).then((r) => r.results[0]!);
};

test('at most max_in_flight attempts run at once; without a wait the others are refused UNAVAILABLE, not executed', async () => {
  const results = await Promise.all(Array.from({ length: 6 }, () => call('capped')));
  expect(results.filter((r) => !r.isError)).toHaveLength(2);
  const refused = results.filter((r) => r.isError);
  expect(refused).toHaveLength(4);
  for (const r of refused) {
    expect(r.error?.kind).toBe(ErrorKind.UNAVAILABLE);
    expect(r.error?.message).toBe('tool "capped" is at its limit of 2 calls running at once on this dispatch replica; this call was not executed');
    expect(r.error?.recoverable).toBe(true);
    expect(r.attempts).toBe(1);
  }
  expect(tools.count('/capped')).toBe(2);
  // Prometheus counts the refusals per tool.
  expect((await d.scrape()).value('dispatch_tool_slot_refusals_total', { tenant: '_shared', tool: 'capped' })).toBe(4);
});

test('with wait_ms the others wait their turn: every call runs, never more than max_in_flight at once', async () => {
  const started = Date.now();
  const running = Promise.all(Array.from({ length: 6 }, () => call('queued')));
  await new Promise((r) => setTimeout(r, 150));
  // Prometheus shows the slots taken.
  expect((await d.scrape()).value('dispatch_tool_in_flight', { tenant: '_shared', tool: 'queued' })).toBe(2);
  const results = await running;
  expect(results.every((r) => !r.isError)).toBe(true);
  expect(tools.count('/queued')).toBe(6);
  expect(maxInFlight(tools.received)).toBe(2);
  // Three rounds of two 300 ms calls.
  expect(Date.now() - started).toBeGreaterThanOrEqual(850);
  expect((await d.scrape()).value('dispatch_tool_in_flight', { tenant: '_shared', tool: 'queued' })).toBe(0);
});

test('a call that gets no slot within wait_ms is refused, saying how long it waited', async () => {
  const first = call('short_wait');
  await new Promise((r) => setTimeout(r, 50));
  const asked = Date.now();
  const second = await call('short_wait');
  expect(second.error?.kind).toBe(ErrorKind.UNAVAILABLE);
  expect(second.error?.message).toBe('tool "short_wait" stayed at its limit of 1 call running at once on this dispatch replica for 200 ms; this call was not executed');
  expect(Date.now() - asked).toBeLessThan(550);
  expect((await first).isError).toBe(false);
  expect(tools.count('/short_wait')).toBe(1);
  expect((await d.scrape()).value('dispatch_tool_slot_refusals_total', { tenant: '_shared', tool: 'short_wait' })).toBe(1);
});

test('a refusal fails before execution, so the retry policy tries again after its backoff', async () => {
  // One slot, no wait, calls of 100 ms, the default retry (a second attempt after 250-375 ms).
  const results = await Promise.all([call('retried'), call('retried')]);
  expect(results.every((r) => !r.isError)).toBe(true);
  expect(results.map((r) => r.attempts).sort()).toEqual([1, 2]);
  expect(tools.count('/retried')).toBe(2);
  expect(maxInFlight(tools.received)).toBe(1);
});

test('a side-effecting call is refused before its idempotency claim: its retry replays the call that ran', async () => {
  const same = () => d.dispatch.dispatch({ sessionId: 'writes', calls: [{ id: `w${++calls}`, name: 'write', arguments: '{"order":1}' }] }).then((r) => r.results[0]!);
  const results = await Promise.all([same(), same()]);
  expect(tools.count('/write')).toBe(1);
  expect(results.every((r) => !r.isError)).toBe(true);
  // The refused one was not IN_PROGRESS (no claim was taken while refused); its second attempt
  // found the first one's completed record.
  expect(results.map((r) => r.idempotentReplay).sort()).toEqual([false, true]);
  expect(results.map((r) => r.attempts).sort()).toEqual([1, 2]);
});

test('an attempt that times out gives its slot back', async () => {
  const first = await call('hang');
  expect(first.error?.kind).toBe(ErrorKind.TIMEOUT);
  const second = await call('hang');
  expect(second.error?.kind).toBe(ErrorKind.TIMEOUT);
  expect(tools.count('/hang')).toBe(2);
});

test('a waiting call cancelled by its client leaves the line: the next call gets the slot', async () => {
  const running = [call('queued'), call('queued')];
  await new Promise((r) => setTimeout(r, 50));
  const controller = new AbortController();
  const waiting = call('queued', controller.signal).then(
    () => undefined,
    (error: ServiceError) => error,
  );
  await new Promise((r) => setTimeout(r, 100));
  controller.abort();
  expect((await waiting)?.code).toBe(status.CANCELLED);
  await Promise.all(running);
  // Had the cancelled call kept its place, the slot handed to it would be lost: these two would
  // run one after the other.
  const next = await Promise.all([call('queued'), call('queued')]);
  expect(next.map((r) => r.isError)).toEqual([false, false]);
  expect(tools.count('/queued')).toBe(4);
  expect(maxInFlight(tools.received.slice(2))).toBe(2);
});
