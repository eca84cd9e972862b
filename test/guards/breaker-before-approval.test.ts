import { ErrorKind, type DispatchResponse } from '../../gen/dispatch/v1/dispatch_pb';
import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { startGuardedApp } from './helpers';

// The breaker gate (DESIGN section 3, step 4) is read before an approver is asked, as the loop
// block and the session budget are (docs/policies.md): a call its tool's open breaker refuses is
// refused BREAKER_OPEN at once, with no APPROVAL_REQUESTED and nothing in ListApprovals. Before,
// the approver was asked, approved (resolved=true), and the call was then refused by the breaker
// without running. A read-only call's retry its own failure's breaker refuses is told that
// failure, as without an approval; a side-effecting call so refused gives back the budget count
// taken before asking (uncounted, as a call let through for its record only). A real HTTP tool.

jest.setTimeout(15_000);

let tools: ToolServer;
beforeAll(async () => {
  tools = await startToolServer({ '/boom': (_req, res) => void res.writeHead(500).end('boom'), '/ok': json({ ok: true }) });
});
afterAll(async () => {
  await tools?.close();
});

const YAML = () => `
tools:
  - name: look
    effect: read_only
    skip_memoize: true
    retry: { max_attempts: 2, initial_backoff_ms: 10, max_backoff_ms: 10 }
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/boom" }
  - name: send
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/boom" }
policies:
  - { match: "*", breaker: { consecutive_failures: 1, half_open_after_ms: 60000 } }
  - { match: send, budget: { max_calls_per_session: 2 } }
  - { match: "*", decide: ask, reason: needs an ok }
limits: { approval_timeout_ms: 10000 }
`;

type Dispatch = Awaited<ReturnType<typeof startGuardedApp>>;

/**
 * The call's response, approving its first ask when `approveFirst`; any other ask is denied at
 * once (so that the old behaviour fails fast) and counted in `asked`.
 */
async function outcome(d: Dispatch, session: string, pending: Promise<DispatchResponse>, approveFirst: boolean, asked: { n: number }): Promise<DispatchResponse> {
  let done: DispatchResponse | undefined;
  let failed: unknown;
  pending.then((r) => (done = r), (e: unknown) => (failed = e));
  const deadline = Date.now() + 10_000;
  while (done === undefined && failed === undefined) {
    if (Date.now() > deadline) throw new Error('no answer in time');
    for (const wait of (await d.dispatch.listApprovals({ sessionId: session })).approvals) {
      const approve = approveFirst && asked.n === 0;
      asked.n++;
      await d.dispatch.resolveApproval({ approvalId: wait.approvalId, approve });
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  if (failed !== undefined) throw failed;
  return done!;
}

test('a call its open breaker refuses is refused BREAKER_OPEN before anyone is asked', async () => {
  const d = await startGuardedApp(YAML());
  try {
    const call = (session: string, id: string, name: string, args = '{}') => d.dispatch.dispatch({ sessionId: session, interactive: true, calls: [{ id, name, arguments: args }] });
    const asked = { n: 0 };
    const ran = tools.count('/boom');
    // Approved, it fails (500) and opens the breaker: its retry is refused unasked, told the 500.
    const first = (await outcome(d, 's1', call('s1', 'a', 'look'), true, asked)).results[0]!;
    expect(tools.count('/boom') - ran).toBe(1);
    expect(first.error?.message).toBe("the tool answered HTTP 500: boom (not retried: the tool's circuit breaker opened after repeated failures, so it is temporarily unavailable)");
    expect(first.attempts).toBe(2);
    expect(asked.n).toBe(1);

    // The next call of the tool: refused at once, nobody asked.
    const second = (await outcome(d, 's1', call('s1', 'b', 'look', '{"n":2}'), false, asked)).results[0]!;
    expect(second.error?.kind).toBe(ErrorKind.BREAKER_OPEN);
    expect(second.error?.retryAfterMs).toBeGreaterThan(50_000);
    expect(asked.n).toBe(1);
    expect(d.events.filter((e) => e.kind === 'APPROVAL_REQUESTED').map((e) => e.toolCallId)).toEqual(['a']);
    expect((await d.dispatch.listApprovals({ sessionId: 's1' })).approvals).toEqual([]);

    // A side-effecting call: approved, it fails (counted 1 of 2), opening send's breaker; the next
    // two are refused BREAKER_OPEN unasked, their counts given back (else the third were BLOCKED).
    const sent = (await outcome(d, 's2', call('s2', 'c', 'send'), true, { n: 0 })).results[0]!;
    expect(sent.error?.kind).toBe(ErrorKind.TOOL_ERROR);
    for (const id of ['d', 'e']) {
      const before = { n: 0 };
      const refused = (await outcome(d, 's2', call('s2', id, 'send', `{"id":"${id}"}`), false, before)).results[0]!;
      expect([id, refused.error?.kind, before.n]).toEqual([id, ErrorKind.BREAKER_OPEN, 0]);
    }
    expect(tools.count('/boom') - ran).toBe(2);
    expect(d.events.filter((e) => e.kind === 'APPROVAL_REQUESTED').map((e) => e.toolCallId)).toEqual(['a', 'c']);
  } finally {
    await d.close();
  }
});
