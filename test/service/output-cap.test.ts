import { startDispatch, type TestDispatch } from '../helpers/servers';

// limits.max_tool_output_chars: no tool output longer than it enters the pipeline; it is cut
// before bounding, with a warning, and the call succeeds.

let d: TestDispatch;
const shout = new Map([['shout', async (args: unknown) => 'A'.repeat((args as { n: number }).n)]]);

beforeAll(async () => {
  d = await startDispatch(
    `
limits: { max_tool_output_chars: 300 }
tools:
  - name: shout
    effect: read_only
    memoize_ttl_seconds: 0
    max_result_chars: 100000
    input_schema: '{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}'
    builtin: { name: shout }
`,
    { builtins: shout },
  );
});
afterAll(() => d.close());

const call = (n: number) => d.dispatch.dispatch({ sessionId: `cap-${n}`, calls: [{ id: 'c1', name: 'shout', arguments: JSON.stringify({ n }) }] }).then((r) => r.results[0]!);

test('an output over max_tool_output_chars is cut to it, with a warning, and is not an error', async () => {
  const result = await call(1_000);
  expect(result.isError).toBe(false);
  expect(result.output).toBe('A'.repeat(300));
  expect(result.warnings).toContain('the tool\'s output was cut at 300 characters before bounding');
});

test('an output within the cap is untouched', async () => {
  const result = await call(300);
  expect(result.output).toBe('A'.repeat(300));
  expect(result.warnings).toEqual([]);
});
