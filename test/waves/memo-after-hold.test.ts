import { DispatchMode } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// In a parallel turn, a read a policy rewrote onto the resource a sibling writes waits for the
// write (README, Parallel turns), and then reads what it wrote: the memo cache is asked once the
// read holds the resource, not before it waits, so the entry the write evicted is not served.
// Real HTTP tools, through gRPC; the write's rate limit makes the memo cache's answer matter.

const files: Record<string, string> = {};
let tools: ToolServer;
let d: TestDispatch;
beforeAll(async () => {
  tools = await startToolServer({
    '/write': (req, res) => {
      const a = req.body.arguments as { path: string; content: string };
      files[a.path] = a.content;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    },
    '/read': (req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end(files[(req.body.arguments as { path: string }).path] ?? 'none'),
  });
  d = await startApp(`
tools:
  - { name: write_file, effect: side_effect, concurrency_safe: true, resource_key: /path, input_schema: '{"type":"object"}', http: { url: "${tools.url}/write" } }
  - { name: read_file, effect: read_only, concurrency_safe: true, resource_key: /path, memoize_ttl_seconds: 60, input_schema: '{"type":"object"}', http: { url: "${tools.url}/read" } }
policies:
  - match: read_file
    when: [{ pointer: /path, op: "=", value: "current" }]
    decide: modify
    set: { /path: report.txt }
  - match: write_file
    rate: { per_second: 1, burst: 1, wait_ms: 3000 }
`);
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});

const outputs = (r: { results: { toolCallId: string; output: string; cached: boolean }[] }) => r.results.map(({ toolCallId, output, cached }) => ({ toolCallId, output, cached }));

test('a read rewritten onto the resource a sibling writes, memoized before, reads the new content after the write', async () => {
  const sessionId = 'memo-hold';
  await d.dispatch.dispatch({ sessionId, calls: [{ id: 'w1', name: 'write_file', arguments: '{"path":"report.txt","content":"v1"}' }, { id: 'r1', name: 'read_file', arguments: '{"path":"current"}' }] });
  const again = await d.dispatch.dispatch({ sessionId, calls: [{ id: 'r1b', name: 'read_file', arguments: '{"path":"current"}' }] });
  expect(outputs(again)).toEqual([{ toolCallId: 'r1b', output: 'v1', cached: true }]);
  const reads = tools.count('/read');
  // The write waits about a second for its rate turn while holding report.txt; the read waits for it.
  const two = await d.dispatch.dispatch({ sessionId, mode: DispatchMode.PARALLEL, calls: [{ id: 'w2', name: 'write_file', arguments: '{"path":"report.txt","content":"v2"}' }, { id: 'r2', name: 'read_file', arguments: '{"path":"current"}' }] });
  expect(outputs(two)).toEqual([
    { toolCallId: 'w2', output: '{"ok":true}', cached: false },
    { toolCallId: 'r2', output: 'v2', cached: false },
  ]);
  expect(tools.count('/read')).toBe(reads + 1);
});
