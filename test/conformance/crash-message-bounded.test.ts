import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp } from '../helpers/servers';

// The second seed: "The dispatch layer must bound every tool result before it enters context"
// (section 6), a crash included (section 8 wraps it, "do not crash the loop"). DESIGN section 11:
// max_result_chars (8,000) holds the whole output. Every executor's error text is cut (an HTTP
// body at 500 characters, an MCP error text and a worker's error_message at 2,000), but a tool that
// crashed in process with a long message (an exception quoting a whole payload) put all of it into
// the error JSON: 100,000 characters into the model's context.

let d: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  const builtins = new Map([
    ['dump', async () => { throw new Error(`cannot parse ${'<row/>'.repeat(20_000)}`); }],
    ['emoji', async () => { throw new Error(`bad ${'😀'.repeat(5_000)}`); }],
  ]);
  d = await startApp(`tools:
  - { name: dump, effect: read_only, builtin: { name: dump } }
  - { name: emoji, effect: read_only, builtin: { name: emoji } }
`, { pipeline: { builtins } });
});
afterAll(() => d.close());

const call = async (name: string) => (await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name, arguments: '{}' }] })).results[0]!;

test("a crash's message is cut at 2,000 characters, as a worker's or an MCP tool's error text is, and the output stays within max_result_chars", async () => {
  const result = await call('dump');
  expect(result.error?.kind).toBe(ErrorKind.UNEXPECTED);
  const message = `the tool crashed: ${`cannot parse ${'<row/>'.repeat(20_000)}`.slice(0, 2_000)}...`;
  expect(result.error?.message).toBe(message);
  expect(JSON.parse(result.output).message).toBe(message);
  expect(result.output.length).toBeLessThanOrEqual(8_000);
});

test('the cut never splits a surrogate pair (the output stays JSON a model API accepts)', async () => {
  const result = await call('emoji');
  const message = result.error!.message;
  expect(message.length).toBeLessThanOrEqual('the tool crashed: '.length + 2_003);
  expect(message).toMatch(/^the tool crashed: bad (😀)+\.\.\.$/u);
  expect(result.output.length).toBeLessThanOrEqual(8_000);
});
