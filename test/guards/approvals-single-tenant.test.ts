import { startApp, startToolServer, json, type ToolServer } from '../helpers/servers';
import { until } from '../helpers/until';

// Without authentication every call is tenant `default`, the only tenant, so the approvals a
// replica holds waiting (1,000) are all its own, as the per-tenant shares of the limits are. Its
// asks were refused past a quarter (250 per tenant), three quarters of the places never usable.

jest.setTimeout(30_000);

let tools: ToolServer;
beforeAll(async () => {
  tools = await startToolServer({ '/refund': json({ refunded: true }) });
});
afterAll(() => tools.close());

test('one tenant (no auth) has more than 250 approvals waiting at once', async () => {
  const d = await startApp(`
tools:
  - { name: refund, effect: side_effect, input_schema: '{"type":"object"}', http: { url: "${tools.url}/refund" } }
policies:
  - { match: refund, decide: ask, reason: refunds need an ok }
`);
  try {
    const turns = Array.from({ length: 300 }, (_, i) => d.dispatch.dispatch({ sessionId: `s${i % 10}`, interactive: true, calls: [{ id: `r${i}`, name: 'refund', arguments: `{"order":${i}}` }] }));
    let waiting = 0;
    // Counted session by session: an answer holds at most 100 (30 wait in each session).
    const count = async () => {
      let n = 0;
      for (let s = 0; s < 10; s++) n += (await d.dispatch.listApprovals({ sessionId: `s${s}` })).approvals.length;
      return n;
    };
    await until(async () => ((waiting = await count()) === 300 ? true : undefined), '300 approvals waiting', 10_000).catch(() => undefined);
    expect(waiting).toBe(300);
    for (let s = 0; s < 10; s++) await d.dispatch.endSession({ sessionId: `s${s}` });
    const results = await Promise.all(turns);
    expect(results.every((r) => r.results[0]!.error?.message.startsWith('the session ended while the call waited for approval'))).toBe(true);
    expect(tools.count('/refund')).toBe(0);
  } finally {
    await d.close();
  }
});
