import { DispatchMode, ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { until } from '../guards/helpers';
import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// Combinations: interactive approvals (decide: ask) in a parallel turn, beside read-only calls,
// with idempotency key_fields and a retry of a 503; each approval decided on its own.

jest.setTimeout(20_000);

let tools: ToolServer;
let d: TestDispatch;
let payFails = 0;

beforeAll(async () => {
  tools = await startToolServer({
    '/pay': (req, res) => {
      if (payFails > 0) {
        payFails--;
        res.writeHead(503).end('busy');
        return;
      }
      res.writeHead(200).end(`paid ${JSON.stringify(req.body.arguments)}`);
    },
    '/look': (_req, res) => void res.writeHead(200).end('seen'),
  });
  d = await startApp(`
limits: { approval_timeout_ms: 10000 }
policies:
  - { match: pay, decide: ask, reason: moves money }
tools:
  - { name: pay, effect: side_effect, concurrency_safe: true, idempotency: { key_fields: ["/to"] }, http: { url: "${tools.url}/pay" } }
  - { name: look, effect: read_only, concurrency_safe: true, http: { url: "${tools.url}/look" } }
`);
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});

const waiting = async (sessionId: string) => (await d.dispatch.listApprovals({ sessionId })).approvals;

/** The session's approvals waiting, once at least `count` are (polled, bounded). */
async function waitingOnce(sessionId: string, count: number): Promise<Awaited<ReturnType<typeof waiting>>> {
  let approvals: Awaited<ReturnType<typeof waiting>> = [];
  await until(() => {
    void waiting(sessionId).then((a) => (approvals = a));
    return approvals.length >= count;
  }, 5000);
  return approvals;
}

test('a parallel turn: one approval granted, one denied, a read-only call beside; results in request order', async () => {
  const turn = d.dispatch.dispatch({
    sessionId: 'ask-waves',
    mode: DispatchMode.PARALLEL,
    interactive: true,
    calls: [
      { id: 'p1', name: 'pay', arguments: '{"to":"ann","amount":1}' },
      { id: 'l1', name: 'look', arguments: '{}' },
      { id: 'p2', name: 'pay', arguments: '{"to":"bob","amount":2}' },
    ],
  });
  const approvals = await waitingOnce('ask-waves', 2);
  const byCall = new Map(approvals.map((a) => [a.toolCallId, a.approvalId]));
  expect((await d.dispatch.resolveApproval({ approvalId: byCall.get('p2')!, approve: false, reason: 'no' })).resolved).toBe(true);
  expect((await d.dispatch.resolveApproval({ approvalId: byCall.get('p1')!, approve: true })).resolved).toBe(true);
  const { results } = await turn;
  expect(results.map((r) => [r.toolCallId, r.isError ? ErrorKind[r.error!.kind] : r.output])).toEqual([
    ['p1', 'paid {"to":"ann","amount":1}'],
    ['l1', 'seen'],
    ['p2', 'BLOCKED'],
  ]);
  expect(tools.count('/pay')).toBe(1);
});

test('two calls of one idempotency key in a parallel turn: the first asked and run, the second replayed unasked', async () => {
  const before = tools.count('/pay');
  const turn = d.dispatch.dispatch({
    sessionId: 'ask-key',
    mode: DispatchMode.PARALLEL,
    interactive: true,
    calls: [
      { id: 'k1', name: 'pay', arguments: '{"to":"cy","amount":1}' },
      { id: 'k2', name: 'pay', arguments: '{"to":"cy","amount":9}' },
    ],
  });
  await waitingOnce('ask-key', 1);
  // A while later, still the first call's approval alone: the second waits for its key.
  await new Promise((r) => setTimeout(r, 200));
  const approvals = await waiting('ask-key');
  expect(approvals.map((a) => a.toolCallId)).toEqual(['k1']);
  await d.dispatch.resolveApproval({ approvalId: approvals[0]!.approvalId, approve: true });
  const { results } = await turn;
  expect(results.map((r) => [r.toolCallId, r.isError ? ErrorKind[r.error!.kind] : r.idempotentReplay ? 'replayed' : 'ran'])).toEqual([
    ['k1', 'ran'],
    ['k2', 'replayed'],
  ]);
  expect(tools.count('/pay')).toBe(before + 1);
});

test('an approved side-effecting call whose tool answers 503 is not retried nor asked again; a re-call replays the 503 unasked', async () => {
  payFails = 1;
  const before = tools.count('/pay');
  const turn = d.dispatch.dispatch({ sessionId: 'ask-503', interactive: true, calls: [{ id: 'r1', name: 'pay', arguments: '{"to":"dee"}' }] });
  let approvals: Awaited<ReturnType<typeof waiting>> = [];
  await until(() => {
    void waiting('ask-503').then((a) => (approvals = a));
    return approvals.length >= 1;
  }, 5000);
  await d.dispatch.resolveApproval({ approvalId: approvals[0]!.approvalId, approve: true });
  const first = (await turn).results[0]!;
  expect(ErrorKind[first.error!.kind]).toBe('TOOL_ERROR');
  expect(first.attempts).toBe(1);
  expect(await waiting('ask-503')).toEqual([]);
  const again = (await d.dispatch.dispatch({ sessionId: 'ask-503', interactive: true, calls: [{ id: 'r2', name: 'pay', arguments: '{"to":"dee"}' }] }, { deadlineMs: 3000 })).results[0]!;
  expect(again.idempotentReplay).toBe(true);
  expect(tools.count('/pay')).toBe(before + 1);
});
