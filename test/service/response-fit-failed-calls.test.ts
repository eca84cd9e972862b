import { startDispatch, type TestDispatch } from '../helpers/servers';

// Found in review: a turn whose calls all failed with long messages, in a message smaller than the
// default (max_message_bytes 64 KiB), did not fit: the error texts were cut to 100 characters at
// the least, ~570 bytes a result with the error JSON that quotes them, and 128 such results took
// 73,031 bytes. Every call had run, side effects included, and the client got RESOURCE_EXHAUSTED
// ("Sent message larger than max (73031 vs. 65536)") instead of any result.

jest.setTimeout(60_000);

let runs = 0;
let d: TestDispatch;
beforeAll(async () => {
  const fail = async () => {
    runs++;
    throw new Error(`the backend said: ${'x'.repeat(3_000)}`);
  };
  d = await startDispatch(
    `
limits: { max_message_bytes: 65536 }
tools:
  - name: fail
    effect: side_effect
    input_schema: '{"type":"object"}'
    builtin: { name: fail }
`,
    { builtins: new Map([['fail', fail]]) },
  );
});
afterAll(() => d?.close());

test('128 calls that failed with long messages: every result comes back, in order, within max_message_bytes', async () => {
  const calls = Array.from({ length: 128 }, (_, k) => ({ id: `c${k}`, name: 'fail', arguments: JSON.stringify({ k }) }));
  const { results } = await d.dispatch.dispatch({ sessionId: 'failing', calls });
  expect(runs).toBe(128);
  expect(results.map((r) => r.toolCallId)).toEqual(calls.map((c) => c.id));
  for (const result of results) {
    expect(result.isError).toBe(true);
    // Still the error JSON a model reads, its message cut and saying so.
    expect(JSON.parse(result.output)).toMatchObject({ error: true, tool: 'fail', kind: 'UNEXPECTED' });
    expect(result.error!.message).toMatch(/^the tool crashed: .*characters cut\]$/);
  }
});

test('a turn that fits with texts of 100 characters or more is not cut further', async () => {
  const calls = Array.from({ length: 40 }, (_, k) => ({ id: `c${k}`, name: 'fail', arguments: JSON.stringify({ k, few: true }) }));
  const { results } = await d.dispatch.dispatch({ sessionId: 'few', calls });
  expect(results.every((r) => r.error!.message.indexOf('...') >= 100)).toBe(true);
});
