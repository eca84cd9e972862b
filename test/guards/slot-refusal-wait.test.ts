import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../../src/errors';
import { createToolSlots } from '../../src/guards';
import { createAbortScope, type Release } from '../../src/pipeline';
import { json, startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// Found by a user probe: a concurrency cap's refusal came with no retry_after_ms, though the README
// says caps refuse with one. It now tells the tool's loop.assumed_wait_ms (1000 unless set): when a
// slot frees is not known, and that is the wait any failure asking to be called again later
// without saying when is taken to have told (loop detection assumed it, unseen by the model).

jest.setTimeout(20_000);

let tools: ToolServer;
let d: TestDispatch;
beforeAll(async () => {
  tools = await startToolServer({ '/slow': json({ ok: true }, 400) });
  d = await startApp(`
tools:
  - { name: plain, effect: read_only, skip_memoize: true, retry: { max_attempts: 1 }, input_schema: '{"type":"object"}', http: { url: "${tools.url}/slow" } }
  - { name: told, effect: read_only, skip_memoize: true, retry: { max_attempts: 1 }, loop: { assumed_wait_ms: 2500 }, input_schema: '{"type":"object"}', http: { url: "${tools.url}/slow" } }
  - { name: retried, effect: read_only, skip_memoize: true, retry: { max_attempts: 2, initial_backoff_ms: 50, max_backoff_ms: 5000, jitter: 0 }, loop: { assumed_wait_ms: 700 }, input_schema: '{"type":"object"}', http: { url: "${tools.url}/slow" } }
policies:
  - match: ["plain", "told", "retried"]
    concurrency: { max_in_flight: 1 }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const both = async (name: string) => {
  const call = (id: string) => d.dispatch.dispatch({ sessionId: `s-${name}-${id}`, calls: [{ id, name, arguments: `{"n":"${id}"}` }] }).then((r) => r.results[0]!);
  return Promise.all([call('a'), call('b')]);
};

test.each([
  ['plain', 1000],
  ['told', 2500],
])('a refusal of %s tells retry_after_ms %d (the tool\'s loop.assumed_wait_ms) and says so in its suggestion', async (name, waitMs) => {
  const results = await both(name);
  const refused = results.filter((r) => r.isError);
  expect(refused).toHaveLength(1);
  const [result] = refused;
  expect(result!.error?.kind).toBe(ErrorKind.UNAVAILABLE);
  expect(result!.error?.message).toBe(`tool "${name}" is at its limit of 1 call running at once on this dispatch replica; this call was not executed`);
  expect(result!.error?.recoverable).toBe(true);
  expect(result!.error?.retryAfterMs).toBe(waitMs);
  expect(result!.error?.suggestion).toBe(`Call it again in ${waitMs} ms or later, or do something else first.`);
});

test('the retry policy waits that long before trying again (its own backoff, 50 ms, being shorter)', async () => {
  tools.received.splice(0);
  const results = await both('retried');
  expect(results.every((r) => !r.isError)).toBe(true);
  expect(results.map((r) => r.attempts).sort()).toEqual([1, 2]);
  const starts = tools.received.map((r) => r.start).sort((a, b) => a - b);
  expect(starts).toHaveLength(2);
  expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(650);
});

test('the slots alone: a refusal carries the wait, the default one for a tool that names none', () => {
  const slots = createToolSlots([{ match: ['x'], maxInFlight: 1, waitMs: 0, shared: false, fallbackMaxInFlight: 1, failClosed: false }])!;
  const signal = createAbortScope().signal;
  const far = Date.now() + 60_000;
  const held = slots.take({ tenant: '', name: 'x', timeoutMs: 1000 }, signal, far) as Release;
  try {
    const refusal = (tool: Parameters<typeof slots.take>[0]) => {
      try {
        slots.take(tool, signal, far);
      } catch (error) {
        return error as DispatchError;
      }
      throw new Error('not refused');
    };
    expect(refusal({ tenant: '', name: 'x', timeoutMs: 1000 })).toMatchObject({ phase: 'before', recoverable: true, retryAfterMs: 1000 });
    expect(refusal({ tenant: '', name: 'x', timeoutMs: 1000, loop: { assumedWaitMs: 42 } })).toMatchObject({ retryAfterMs: 42, suggestion: 'Call it again in 42 ms or later, or do something else first.' });
  } finally {
    held();
  }
});
