import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { closedPort, json, startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

let tools: ToolServer;
let d: TestDispatch;
let flaky = 0;


beforeAll(async () => {
  const refused = `http://127.0.0.1:${await closedPort()}/x`;
  tools = await startToolServer({
    '/slow': json({ late: true }, 1000),
    '/503': (_req, res) => void res.writeHead(503, { 'retry-after': '0' }).end('busy'),
    '/400': (_req, res) => void res.writeHead(400).end('bad city'),
    '/flaky': (_req, res) => void (flaky++ % 2 === 0 ? res.writeHead(503).end('try again') : res.writeHead(200).end('{"ok":1}')),
    '/reset': (req, res) => void res.socket?.destroy(),
  });
  const policy = 'retry: { initial_backoff_ms: 10, max_backoff_ms: 20 }';
  const tool = (name: string, effect: string, path: string, extra = '') => `
  - name: ${name}
    effect: ${effect}
    timeout_ms: 150
    ${policy}
    ${extra}
    http: { url: "${path.startsWith('http') ? path : tools.url + path}" }`;
  d = await startDispatch(`tools:${[
    tool('ro_slow', 'read_only', '/slow'),
    tool('se_slow', 'side_effect', '/slow'),
    tool('ro_503', 'read_only', '/503'),
    tool('se_503', 'side_effect', '/503'),
    tool('ro_400', 'read_only', '/400'),
    tool('se_400', 'side_effect', '/400'),
    tool('ro_refused', 'read_only', refused),
    tool('se_refused', 'side_effect', refused),
    tool('ro_flaky', 'read_only', '/flaky'),
    tool('ro_reset', 'read_only', '/reset'),
    tool('se_reset', 'side_effect', '/reset'),
  ].join('')}`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

let session = 0;
async function run(name: string) {
  const before = tools.count();
  const { results } = await d.dispatch.dispatch({ sessionId: `retries-${session++}`, calls: [{ id: 'c1', name, arguments: '{}' }] });
  return { result: results[0]!, executions: tools.count() - before };
}

test.each([
  ['ro_slow', ErrorKind.TIMEOUT, 2, 2],
  ['se_slow', ErrorKind.TIMEOUT, 1, 1],
  ['ro_503', ErrorKind.TOOL_ERROR, 2, 2],
  ['se_503', ErrorKind.TOOL_ERROR, 1, 1],
  ['ro_400', ErrorKind.TOOL_ERROR, 1, 1],
  ['se_400', ErrorKind.TOOL_ERROR, 1, 1],
  ['ro_refused', ErrorKind.UNAVAILABLE, 2, 0],
  ['se_refused', ErrorKind.UNAVAILABLE, 2, 0],
  ['ro_reset', ErrorKind.UNAVAILABLE, 2, 2],
  ['se_reset', ErrorKind.UNAVAILABLE, 1, 1],
])('%s fails with kind %i after %i attempts and %i executions', async (name, kind, attempts, executions) => {
  const { result, executions: ran } = await run(name);
  expect(result.error?.kind).toBe(kind);
  expect(result.attempts).toBe(attempts);
  expect(ran).toBe(executions);
  const errorJson = JSON.parse(result.output);
  expect(errorJson.attempts).toBe(attempts);
  expect(errorJson.retried).toBe(attempts > 1);
});

test('a read-only 503 followed by success returns the success after 2 attempts', async () => {
  flaky = 0;
  const { result, executions } = await run('ro_flaky');
  expect(result.isError).toBe(false);
  expect(result.output).toBe('{"ok":1}');
  expect(result.attempts).toBe(2);
  expect(executions).toBe(2);
});

test('the tool receives the DESIGN request shape and headers', async () => {
  const before = tools.count();
  await d.dispatch.dispatch({ sessionId: 'shape', calls: [{ id: 'call_9', name: 'se_400', arguments: '{}' }] }, { metadata: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } });
  const req = tools.received[before]!;
  expect(Object.keys(req.body).sort()).toEqual(['arguments', 'attempt', 'idempotency_key', 'session_id', 'tool', 'tool_call_id']);
  expect(req.body).toMatchObject({ tool: 'se_400', arguments: {}, tool_call_id: 'call_9', session_id: 'shape', attempt: 1 });
  expect(req.headers['idempotency-key']).toBe(req.body.idempotency_key);
  expect(req.headers.traceparent).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
});
