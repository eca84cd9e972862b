import { create } from '@bufbuild/protobuf';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect, ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import { DispatchError } from '../../src/errors';
import { createHttpExecutor, type ExecutorContext } from '../../src/executors';
import { createSchemaCompiler, resolveTool } from '../../src/registry';
import { startToolServer, type ToolServer } from '../helpers/servers';

// A spec stored by an older version (in Redis, shared by replicas) may carry a header value that
// registration refuses now, such as a token with a stray newline. The call fails before anything
// is sent, as meant, but its message quoted undici's, which quotes the value: `Headers.set:
// "Bearer sk_live_..." is an invalid header value`, handed to the model and the calling tenant.
// The message names the header, never its value. Real loopback tool server.

let server: ToolServer;
beforeAll(async () => {
  server = await startToolServer({ '/t': (_req, res) => void res.end('ok') });
});
afterAll(() => server.close());

const compiler = createSchemaCompiler(65_536);
const tool = (headers: Record<string, string>) =>
  resolveTool(create(ToolSpecSchema, { name: 't', effect: Effect.SIDE_EFFECT, executor: { case: 'http', value: { url: `${server.url}/t`, headers } } }), 'acme', compiler.compile('{"type":"object"}'));

function context(): ExecutorContext {
  const signal = AbortSignal.timeout(5000);
  return { tenant: 'acme', sessionId: 's', toolCallId: 'c', attempt: 1, idempotencyKey: 'k', localKey: 'k', signal, onAbort: () => () => undefined, deadline: Date.now() + 5000, scratchDir: async () => '/tmp' };
}

test.each([
  ['authorization', 'Bearer sk_live_STORED\r\nSECRET_123'],
  ['x-api-key', 'sk_live_STORED_SECRET_123\u0000'],
])("a stored header %s whose value HTTP cannot carry fails the call before sending, without its value in the message", async (name, value) => {
  const error = await createHttpExecutor()
    .execute(tool({ 'x-team': 'mail', [name]: value }), {}, context())
    .then(() => undefined, (e: unknown) => e as DispatchError);
  expect(error).toBeInstanceOf(DispatchError);
  expect(error).toMatchObject({ kind: ErrorKind.UNEXPECTED, phase: 'before' });
  expect(error!.message).toBe(`the tool's configured header "${name}" cannot be sent (its value has a character HTTP headers cannot carry); nothing was sent`);
  expect(server.count()).toBe(0);
});
