// The connection an HTTP tool is called over: a tenant's tool is checked where the connection is
// made (a literal address too, for a tool registered under other rules, such as by a replica with
// a looser config); the operator's are not; and undici's own headers/body timeouts (300 s by
// default) are off, so a tool's own timeout governs. A server on 127.0.0.1 stands for both.
import { create } from '@bufbuild/protobuf';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect, ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import { DispatchError } from '../../src/errors';
import { createHttpExecutor } from '../../src/executors';
import type { ExecutorContext } from '../../src/executors';
import { createDestinationPolicy, createSchemaCompiler, resolveTool } from '../../src/registry';
import { json, startToolServer, type ToolServer } from '../helpers/servers';

let server: ToolServer;
beforeAll(async () => {
  server = await startToolServer({
    '/fast': json({ ok: true }),
    // undici checks its headers timeout on a coarse (~0.5-1 s) clock: these wait 2 s.
    '/slow-headers': json({ late: true }, 2000),
    '/slow-body': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first ');
      setTimeout(() => res.end('second'), 2000).unref();
    },
  });
});
afterAll(() => server.close());

const compiler = createSchemaCompiler(65_536);
const tool = (tenant: string, path: string) =>
  resolveTool(create(ToolSpecSchema, { name: 't', effect: Effect.READ_ONLY, executor: { case: 'http', value: { url: `${server.url}${path}` } } }), tenant, compiler.compile('{"type":"object"}'));

function context(timeoutMs = 5000): ExecutorContext {
  const signal = AbortSignal.timeout(timeoutMs);
  return {
    tenant: 'acme',
    sessionId: 's',
    toolCallId: 'c',
    attempt: 1,
    idempotencyKey: 'k',
    localKey: 'k',
    signal,
    onAbort: (listener) => {
      const run = () => listener(signal.reason);
      signal.addEventListener('abort', run, { once: true });
      return () => signal.removeEventListener('abort', run);
    },
    deadline: Date.now() + timeoutMs,
    scratchDir: async () => '/tmp',
  };
}

const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error as DispatchError);

test("a tenant's tool at a denied literal address is refused at connect time: BLOCKED, phase before, nothing sent", async () => {
  const executor = createHttpExecutor({ policy: createDestinationPolicy({ httpDeny: ['127.0.0.0/8'] }) });
  const before = server.count();
  const error = await failure(executor.execute(tool('acme', '/fast'), {}, context()));
  expect(error).toBeInstanceOf(DispatchError);
  expect(error).toMatchObject({ kind: ErrorKind.BLOCKED, phase: 'before', recoverable: false });
  expect(error!.message).toBe(`dispatch refused to connect to the tool at ${server.url}/fast: 127.0.0.1 is denied by registry.http_deny "127.0.0.0/8"; nothing was sent`);
  expect(server.count()).toBe(before);
});

test("the operator's tool (tenant \"\") at the same address is not checked", async () => {
  const executor = createHttpExecutor({ policy: createDestinationPolicy({ httpDeny: ['127.0.0.0/8'] }) });
  await expect(executor.execute(tool('', '/fast'), {}, context())).resolves.toBe('{"ok":true}');
});

test("undici's headers and body timeouts, when set below a tool's timeout, cut the call first (why they are off by default)", async () => {
  const executor = createHttpExecutor({ transport: { idleTimeoutMs: 100 } });
  for (const [path, code] of [['/slow-headers', 'UND_ERR_HEADERS_TIMEOUT'], ['/slow-body', 'UND_ERR_BODY_TIMEOUT']] as const) {
    const error = await failure(executor.execute(tool('acme', path), {}, context(10_000)));
    expect(error?.message).toBe(`the connection to the tool at ${server.url}${path} failed mid-request (${code})`);
  }
});

test("by default only the tool's own timeout bounds the wait: late headers and a pause in the body are waited for", async () => {
  const executor = createHttpExecutor();
  const [headers, body] = await Promise.all([executor.execute(tool('acme', '/slow-headers'), {}, context(10_000)), executor.execute(tool('', '/slow-body'), {}, context(10_000))]);
  expect([headers, body]).toEqual(['{"late":true}', 'first second']);
  const error = await failure(executor.execute(tool('acme', '/slow-headers'), {}, context(200)));
  expect(error).toBeDefined();
  expect(error!.message).not.toMatch(/UND_ERR_(HEADERS|BODY)_TIMEOUT/);
});
