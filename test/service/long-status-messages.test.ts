import { status } from '@grpc/grpc-js';
import type * as grpc from '@grpc/grpc-js';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startDispatch, type TestDispatch } from '../helpers/servers';

// A status message travels in HTTP/2 trailers (grpc-message, and grpc-status-details-bin when it
// has a reason): one over ~64 KB never reached the client, which waited for its deadline, and the
// connection it shared with other calls stalled with it (found fuzzing). Messages that quote a
// caller's input (a 100,000-character tool name, a 100 KB resource_key) are bounded, quoted short.

let d: TestDispatch;
beforeAll(async () => {
  d = await startDispatch('tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n');
});
afterAll(() => d.close());

const spec = (name: string, extra: object = {}) => ({ name, effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', executor: { case: 'builtin' as const, value: { name: 'echo' } }, ...extra });

/** The error of registering `tools`, and how long it took to come back. */
async function refusal(tools: object[]): Promise<{ error: grpc.ServiceError; ms: number }> {
  const started = Date.now();
  const error = await d.registry.registerTools({ tools }, { deadlineMs: 5_000 }).then(
    () => undefined,
    (e: grpc.ServiceError) => e,
  );
  return { error: error!, ms: Date.now() - started };
}

/** A Dispatch on the same channel answers at once. */
async function dispatchAnswers(): Promise<void> {
  const started = Date.now();
  const { results } = await d.dispatch.dispatch({ sessionId: 'after', calls: [{ id: 'c', name: 'echo', arguments: '{"x":1}' }] }, { deadlineMs: 5_000 });
  expect(results[0]!.output).toBe('{"x":1}');
  expect(Date.now() - started).toBeLessThan(1_000);
}

test('a 100,000-character tool name is refused at once, the name quoted short', async () => {
  await d.dispatch.dispatch({ sessionId: 'warm', calls: [{ id: 'c', name: 'echo', arguments: '{}' }] });
  const { error, ms } = await refusal([spec('n'.repeat(100_000))]);
  expect(error).toMatchObject({ code: status.INVALID_ARGUMENT });
  expect(error.details).toMatch(/^tools\[0\]: name "n{200}\.\.\." must be 1-128 characters/);
  expect(error.details.length).toBeLessThan(1_000);
  expect(ms).toBeLessThan(2_000);
  await dispatchAnswers();
});

test.each([
  ['resource_key', { resourceKey: 'k'.repeat(100_000) }],
  ['primary_parameter', { primaryParameter: 'p'.repeat(100_000) }],
  ['idempotency.key_fields', { idempotency: { keyFields: ['f'.repeat(100_000)] } }],
])('a 100 KB %s that is no JSON pointer is refused at once, quoted short', async (field, extra) => {
  const { error, ms } = await refusal([spec('bad', extra)]);
  expect(error).toMatchObject({ code: status.INVALID_ARGUMENT });
  expect(error.details).toMatch(new RegExp(`^tools\\[0\\]: tool "bad": ${field.replace('.', '\\.')} "[a-z]{200}\\.\\.\\." is not a JSON pointer$`));
  expect(ms).toBeLessThan(2_000);
  await dispatchAnswers();
});

test('a 100 KB http.url is quoted short', async () => {
  const { error, ms } = await refusal([spec('bad', { executor: { case: 'http', value: { url: `not a url ${'u'.repeat(100_000)}` } } })]);
  expect(error).toMatchObject({ code: status.INVALID_ARGUMENT });
  expect(error.details.length).toBeLessThan(1_000);
  expect(ms).toBeLessThan(2_000);
});

test('a schema whose 100 KB pattern does not compile gets a bounded message', async () => {
  const schema = JSON.stringify({ type: 'object', properties: { a: { type: 'string', pattern: `(?=x)${'a'.repeat(100_000)}` } } });
  const { error, ms } = await refusal([spec('bad', { inputSchema: schema })]);
  expect(error).toMatchObject({ code: status.INVALID_ARGUMENT });
  expect(error.details).toMatch(/^tools\[0\] \("bad"\): input_schema does not compile: /);
  expect(error.details.length).toBeLessThan(5_000);
  expect(ms).toBeLessThan(2_000);
  await dispatchAnswers();
});

test.each([
  ['ASCII', 'h'],
  ['three-byte', '\u20ac'],
  ['astral', '\u{1F600}'],
])('a message quoting 100,000 %s characters in full is cut to its head and tail, pairs whole', async (_kind, char) => {
  // http.headers problems quote the header name whole: the status itself is bounded.
  const url = 'http://127.0.0.1:1/x';
  const { error, ms } = await refusal([spec('bad', { executor: { case: 'http', value: { url, headers: { [` ${char.repeat(100_000)}`]: 'v' } } } })]);
  expect(error).toMatchObject({ code: status.INVALID_ARGUMENT });
  expect(error.details).toMatch(/^tools\[0\]: tool "bad": http\.headers name " /);
  expect(error.details).toMatch(/ \.\.\. \[\d+ characters omitted\] \.\.\. /);
  expect(error.details).toMatch(/is not a valid HTTP header name$/);
  // On the wire: grpc-message percent-encodes each non-ASCII UTF-8 byte, and grpc-status-details-bin
  // carries it again in base64; together within the 8 KB of metadata gRPC's C core accepts.
  const utf8 = Buffer.from(error.details);
  const percentEncoded = [...utf8].reduce((sum, byte) => sum + (byte < 0x80 ? 1 : 3), 0);
  expect(percentEncoded + Math.ceil((utf8.length * 4) / 3)).toBeLessThanOrEqual(6_200);
  expect(error.details).not.toContain('\ufffd');
  expect(ms).toBeLessThan(2_000);
  await dispatchAnswers();
});
