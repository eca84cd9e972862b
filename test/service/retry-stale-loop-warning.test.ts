import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// Found in a pipeline review: an attempt's loop warning went into the warnings its call's next
// attempt starts from, so a call whose first attempt failed as the call before it had (the loop
// window's 2nd identical failure: "failed the same way 2 times") and whose retry then succeeded
// answered the model with its success and a warning to change the approach, which nothing failed
// to deserve. The warning belongs to the attempt that earned it: its result, and its event.
// Real HTTP tool behind a real gRPC dispatch.

let tools: ToolServer;
let d: TestDispatch;
let hits = 0;

beforeAll(async () => {
  tools = await startToolServer({
    // Fails the first three requests (the first call's two attempts, the second call's first), then answers.
    '/flaky': (_req, res) => void (++hits <= 3 ? res.writeHead(503).end('busy') : res.writeHead(200).end('fine')),
  });
  d = await startApp(`
tools:
  - name: flaky
    effect: read_only
    skip_memoize: true
    retry: { max_attempts: 2, initial_backoff_ms: 1, max_backoff_ms: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/flaky" }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const call = async (id: string) => (await d.dispatch.dispatch({ sessionId: 'stale-warning', calls: [{ id, name: 'flaky', arguments: '{}' }] })).results[0]!;

test("a retry that succeeds carries no loop warning its failed attempt earned", async () => {
  const first = await call('a');
  expect(first).toMatchObject({ isError: true, attempts: 2 });
  const second = await call('b');
  expect(tools.count('/flaky')).toBe(4);
  expect(second).toMatchObject({ isError: false, attempts: 2, output: 'fine' });
  expect(second.warnings).toEqual([]);
});
