import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startToolServer, type ToolServer } from '../helpers/servers';
import { startMetricsApp, type MetricsApp } from './metrics-app';

// A model that calls a side-effecting tool again with identical arguments is answered from the
// idempotency record: the tool does not run, and the call counts as an idempotent hit. The
// replayed result is the first call's (an UNEXPECTED error, an output the dispatch layer cut),
// but this call neither crashed a tool nor had a result cut: counting it again in those rates
// doubled a tool's crash rate at every re-call, as if it had crashed each time.

let tools: ToolServer;
let d: MetricsApp;
let ran = 0;

beforeAll(async () => {
  tools = await startToolServer({
    '/post': (_req, res) => void (ran++, res.writeHead(200).end('this is not json')),
    '/dump': (_req, res) => void (ran++, res.writeHead(200).end('x'.repeat(1000))),
  });
  d = await startMetricsApp(`
tools:
  - name: post
    effect: side_effect
    returns_json: true
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/post" }
  - name: dump
    effect: side_effect
    max_result_chars: 100
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/dump" }
`);
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});

test('an identical re-call replayed from the idempotency record is an idempotent hit, not another crash nor another cut result', async () => {
  for (const id of ['c1', 'c2']) {
    const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: `${id}-post`, name: 'post', arguments: '{"to":"a"}' }, { id: `${id}-dump`, name: 'dump', arguments: '{"to":"a"}' }] });
    expect(results.map((r) => [r.error?.kind ?? ErrorKind.UNSPECIFIED, r.truncated, r.idempotentReplay])).toEqual([
      [ErrorKind.UNEXPECTED, false, id === 'c2'],
      [ErrorKind.UNSPECIFIED, true, id === 'c2'],
    ]);
  }
  // Each tool ran (and crashed, or had its output cut) once.
  expect(ran).toBe(2);
  const { stats } = await d.registry.getToolStats({});
  const rates = Object.fromEntries(stats.map((s) => [s.tool, { calls: s.calls, idempotentHit: s.rates!.idempotentHit, unexpectedException: s.rates!.unexpectedException, resultBounding: s.rates!.resultBounding }]));
  expect(rates).toEqual({
    post: { calls: 2n, idempotentHit: 0.5, unexpectedException: 0.5, resultBounding: 0 },
    dump: { calls: 2n, idempotentHit: 0.5, unexpectedException: 0, resultBounding: 0.5 },
  });
  const m = await d.scrape();
  expect(m.value('dispatch_tool_unexpected_exceptions_total', { tool: 'post' })).toBe(1);
  expect(m.value('dispatch_tool_bounded_results_total', { tool: 'dump' })).toBe(1);
  // The replay's outcome is still its result's kind.
  expect(m.value('dispatch_tool_calls_total', { tool: 'post', outcome: 'UNEXPECTED' })).toBe(2);
});
