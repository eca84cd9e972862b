// An output the redaction worker could not redact (its thread ran out of memory, or took past its
// bound) fails its call, closed: the model is told UNEXPECTED after execution, never the text; the
// call is not retried, a side-effecting one's record keeps the failure (the same call is replayed,
// not run again), and the tool's breaker does not count it. Needs dist/ (the worker's script).
import { startGuardedApp, errorJson } from '../guards/helpers';
import { startToolServer, type ToolServer } from '../helpers/servers';

jest.setTimeout(30_000);

/** ~9 MB of JSON objects holding passwords: more than the 16 MB heap given to the worker below. */
const LEAKY = JSON.stringify(Array.from({ length: 200_000 }, (_, i) => ({ password: `hunter2hunter2${i}`, note: `n${i}` })));

let tools: ToolServer;
let d: Awaited<ReturnType<typeof startGuardedApp>>;

beforeAll(async () => {
  tools = await startToolServer({ '/leaky': (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(LEAKY) });
  d = await startGuardedApp(
    `
tools:
  - { name: read_leaky, effect: read_only, skip_memoize: true, input_schema: '{"type":"object"}', http: { url: "${tools.url}/leaky" } }
  - { name: write_leaky, effect: side_effect, input_schema: '{"type":"object"}', http: { url: "${tools.url}/leaky" } }
`,
    { redactionWorker: { heapMb: 16 } },
  );
});

afterAll(async () => {
  await d?.close();
  await tools?.close();
});

test('a read whose output the worker could not redact fails UNEXPECTED, without its text, and is not retried', async () => {
  const res = await d.dispatch.dispatch({ sessionId: 'r', calls: [{ id: 'c1', name: 'read_leaky', arguments: '{}' }] });
  const result = res.results[0]!;
  expect(result.isError).toBe(true);
  expect(result.output).not.toContain('hunter2');
  expect(errorJson(result.output)).toMatchObject({
    kind: 'UNEXPECTED',
    message: expect.stringMatching(/^the tool answered \d+ characters, which were not redacted \(the redaction worker stopped while redacting it \(.*memory.*\)\); the answer is withheld$/),
    recoverable: false,
    attempts: 1,
  });
  expect(tools.count('/leaky')).toBe(1);
});

test('a side-effecting call the same: its record keeps the failure, so the same call again does not run the tool', async () => {
  const before = tools.count('/leaky');
  const call = { id: 'w1', name: 'write_leaky', arguments: '{"n":1}' };
  const first = (await d.dispatch.dispatch({ sessionId: 'w', calls: [call] })).results[0]!;
  expect(first.isError).toBe(true);
  expect(first.output).not.toContain('hunter2');
  expect(errorJson(first.output)).toMatchObject({ kind: 'UNEXPECTED', suggestion: expect.stringContaining('do not call it again') });
  const again = (await d.dispatch.dispatch({ sessionId: 'w', calls: [{ ...call, id: 'w2' }] })).results[0]!;
  expect(again.isError).toBe(true);
  expect(again.output).not.toContain('hunter2');
  expect(tools.count('/leaky')).toBe(before + 1);
});
