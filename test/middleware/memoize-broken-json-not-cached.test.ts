import { startToolServer, type ToolServer } from '../helpers/servers';
import { errorJson, startGuardedApp } from '../guards/helpers';

// Found in review: memoize runs inside result verification (DESIGN section 3), and it cached the
// output of a `returns_json` tool that answered text that is not JSON (a gateway's HTML page with a
// 200, an empty body). Verification failed it as UNEXPECTED, but the same call then failed again
// from the cache for memoize_ttl_seconds (60 s by default) without reaching the tool, after the
// tool had recovered: an error served from the cache.

let tools: ToolServer;
let d: Awaited<ReturnType<typeof startGuardedApp>>;
let answers = 0;

beforeAll(async () => {
  tools = await startToolServer({
    // The first answer is a proxy's error page; the tool is back for the next.
    '/report': (_req, res) => void res.writeHead(200).end(++answers === 1 ? '<html><body>502 Bad Gateway</body></html>' : '{"rows":3}'),
  });
  d = await startGuardedApp(`
tools:
  - { name: report, effect: read_only, returns_json: true, input_schema: '{"type":"object"}', http: { url: "${tools.url}/report" } }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const call = (id: string) => d.dispatch.dispatch({ sessionId: 's', calls: [{ id, name: 'report', arguments: '{"day":"2024-05-01"}' }] }).then((r) => r.results[0]!);

test('an output that failed verification is not cached: the next identical call reaches the tool', async () => {
  const first = await call('c1');
  expect(first.isError).toBe(true);
  expect(errorJson(first.output).kind).toBe('UNEXPECTED');
  const second = await call('c2');
  expect([second.isError, second.output, second.cached, tools.count('/report')]).toEqual([false, '{"rows":3}', false, 2]);
  // A good answer is cached as before.
  const third = await call('c3');
  expect([third.output, third.cached, tools.count('/report')]).toEqual(['{"rows":3}', true, 2]);
});
