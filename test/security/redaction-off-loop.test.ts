// Found in review: redaction of a tool's output ran on the event loop, ~0.65 s a MiB of
// `password: x` lines, so one HTTP tool answering megabytes (max_tool_output_chars is 16 Mi) froze
// the replica for every tenant for seconds: no other call, health check or stream was served.
// Outputs past INLINE_REDACTION_CHARS are now redacted in a worker thread; the event loop only
// hands the text over and back. Needs dist/ (`npm run build`): the worker runs the built script.
import { redactSecrets } from '../../src/middleware';
import { boundResult } from '../../src/pipeline/bound-result';
import { startGuardedApp } from '../guards/helpers';
import { startToolServer, type ToolServer } from '../helpers/servers';

jest.setTimeout(60_000);

const LINE = 'password: x\n';
const LINES = 700_000;
/** ~8 MiB of `password: x` lines: ~2.5 s of redaction on the event loop before, alone on a core. */
const HUGE = LINE.repeat(LINES);
const MAX_RESULT_CHARS = 20_000;

/**
 * The longest a small call may take while the huge output is read, redacted and bounded. Measured
 * here: 2-20 ms each, up to ~310 ms for those beside the reading of the 8 MiB answer (its decoding)
 * and its hand-over to a worker thread that is starting (~190 ms then, ~40 ms once started); with
 * the redaction on the event loop, the call meeting it took 2,557 ms, and only 3 calls ran.
 */
const SMALL_CALL_MS = 1_000;

let tools: ToolServer;
let d: Awaited<ReturnType<typeof startGuardedApp>>;

beforeAll(async () => {
  tools = await startToolServer({ '/huge': (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end(HUGE) });
  d = await startGuardedApp(`
tools:
  - { name: huge, effect: read_only, skip_memoize: true, max_result_chars: ${MAX_RESULT_CHARS}, timeout_ms: 50000, input_schema: '{"type":"object"}', http: { url: "${tools.url}/huge" } }
  - { name: echo, effect: read_only, skip_memoize: true, input_schema: '{"type":"object"}', builtin: { name: echo } }
`);
});

afterAll(async () => {
  await d?.close();
  await tools?.close();
});

test("a huge output is redacted off the event loop: another session's small calls go on meanwhile", async () => {
  // What redactSecrets(HUGE) answers, each line redacted alone, without its 2.5 s on this thread.
  const expected = redactSecrets(LINE).repeat(LINES);
  let done = false;
  const big = d.dispatch.dispatch({ sessionId: 'big', calls: [{ id: 'h', name: 'huge', arguments: '{}' }] }).finally(() => (done = true));
  const latencies: number[] = [];
  // Bounded in count and time: at most 2,000 calls, for at most 45 s.
  const stopAt = Date.now() + 45_000;
  for (let i = 0; !done && i < 2_000 && Date.now() < stopAt; i++) {
    const started = performance.now();
    const res = await d.dispatch.dispatch({ sessionId: 'small', calls: [{ id: `e${i}`, name: 'echo', arguments: `{"n":${i}}` }] });
    latencies.push(performance.now() - started);
    expect(res.results[0]!.isError).toBe(false);
    await new Promise((r) => setTimeout(r, 10));
  }
  const res = await big;
  expect(res.results[0]!.isError).toBe(false);
  const output = res.results[0]!.output;
  expect(output).not.toContain('password: x');
  expect(output).toBe(boundResult(expected, MAX_RESULT_CHARS).text);
  // The small calls ran all along, each quickly: dozens of them while the output was redacted.
  expect(latencies.length).toBeGreaterThan(20);
  expect(Math.max(...latencies)).toBeLessThan(SMALL_CALL_MS);
});
