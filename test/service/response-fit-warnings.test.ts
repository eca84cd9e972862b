import { startDispatch, type TestDispatch } from '../helpers/servers';

// A turn's results fit in max_response_bytes whatever else they carry besides their outputs:
// - warnings: a lenient tool adds one per repaired element, each quoting the value twice
//   ("x" -> ["x"]), and the first bound of those (20 warnings of the turn's share, 100 to 2,000
//   characters) could still take more than the whole message when the characters are 3 bytes each;
// - the handle of each result cut to fit, which holds its session id (up to 256 code points, so
//   up to ~1.4 KB) and was counted as part of 512 bytes a cut result was assumed to add.

jest.setTimeout(60_000);

const opened: TestDispatch[] = [];
afterAll(async () => {
  for (const d of opened) await d.close();
});

test('40 calls of 21 repaired elements of 1,000 CJK characters: every result comes back, within 4 MiB', async () => {
  const d = await startDispatch(`
tools:
  - name: wrap
    effect: read_only
    lenient_arguments: true
    input_schema: '{"type":"object","properties":{"a":{"type":"array","items":{"type":"array"}}}}'
    builtin: { name: echo }
`);
  opened.push(d);
  const a = Array.from({ length: 21 }, () => '\u4e2d'.repeat(1_000));
  // Each call its own (the same call ten times is a loop).
  const calls = Array.from({ length: 40 }, (_, i) => ({ id: `c${i}`, name: 'wrap', arguments: JSON.stringify({ i, a }) }));
  // Before: RESOURCE_EXHAUSTED (grpc-js refused to send ~4.8 MB), after every call ran.
  const { results } = await d.dispatch.dispatch({ sessionId: 'warned', calls });
  expect(results.map((r) => r.toolCallId)).toEqual(calls.map((c) => c.id));
  expect(results.every((r) => !r.isError && r.warnings.length === 21)).toBe(true);
  const bytes = results.reduce((sum, r) => sum + r.warnings.reduce((s, w) => s + Buffer.byteLength(w), 0) + Buffer.byteLength(r.output), 0);
  expect(bytes).toBeLessThan(4 * 1024 * 1024);
});

test('results cut to fit in a session of a long id: the handles they get are counted, and the turn comes back', async () => {
  let runs = 0;
  const shout = async (args: unknown) => {
    runs++;
    return 'A'.repeat((args as { n: number }).n);
  };
  const d = await startDispatch(
    `
limits: { max_message_bytes: 65536 }
tools:
  - name: shout
    effect: side_effect
    max_result_chars: 100000
    input_schema: '{"type":"object","properties":{"n":{"type":"integer"},"k":{"type":"integer"}}}'
    builtin: { name: shout }
`,
    { builtins: new Map([['shout', shout]]) },
  );
  opened.push(d);
  // 256 code points of 4 bytes: each new handle is ~1,390 bytes.
  const sessionId = '\u{1F600}'.repeat(256);
  const calls = Array.from({ length: 6 }, (_, k) => ({ id: `c${k}`, name: 'shout', arguments: JSON.stringify({ n: 30_000, k }) }));
  // Before: RESOURCE_EXHAUSTED (Sent message larger than max (~69,000 vs. 65536)) after the six side effects ran.
  const { results } = await d.dispatch.dispatch({ sessionId, calls });
  expect(runs).toBe(6);
  expect(results.map((r) => [r.isError, r.truncated, r.resultHandle.length > 1_000])).toEqual(calls.map(() => [false, true, true]));
  const page = await d.dispatch.readResult({ resultHandle: results[5]!.resultHandle, offset: 29_990 });
  expect([page.text, page.totalChars]).toEqual(['A'.repeat(10), 30_000]);
});
