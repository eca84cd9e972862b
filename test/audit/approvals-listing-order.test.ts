import type { Timestamp } from '@bufbuild/protobuf/wkt';
import { startApp, startToolServer, json, type TestDispatch, type ToolServer } from '../helpers/servers';
import { until } from '../helpers/until';
import { dispatchctlAt } from '../helpers/dispatchctl';

// ListApprovals answers "the first to expire first" (docs/policies.md), and cuts its page of 100
// there. With the memory store the replica's own waits came in the order they were asked: a call
// asked later with a shorter deadline (its wait ends first) was listed after waits that end
// later, and past 100 waits it was left out of the page altogether. The full app, real gRPC.

jest.setTimeout(30_000);

let tools: ToolServer;
let d: TestDispatch;
beforeAll(async () => {
  tools = await startToolServer({ '/refund': json({ refunded: true }) });
  d = await startApp(`
tools:
  - name: refund
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/refund" }
policies:
  - match: refund
    decide: ask
    reason: refunds need an ok
limits: { approval_timeout_ms: 20000 }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const ms = (t: Timestamp | undefined) => Number(t!.seconds) * 1000 + Math.round(t!.nanos / 1e6);
const refund = (sessionId: string, deadlineMs?: number) =>
  d.dispatch.dispatch({ sessionId, interactive: true, calls: [{ id: `c-${sessionId}`, name: 'refund', arguments: '{}' }] }, deadlineMs ? { deadlineMs } : {}).catch((error: Error) => error);
const listedCount = (n: number) =>
  until(async () => {
    const answer = await d.dispatch.listApprovals({});
    return answer.approvals.length >= n ? answer : undefined;
  }, `${n} waits listed`, 10_000);

test('a wait asked later that ends sooner (its call deadline) is listed first, also by dispatchctl', async () => {
  const late = refund('ends-late');
  await listedCount(1);
  const soon = refund('ends-soon', 8_000);
  const answer = await listedCount(2);
  expect(answer.approvals.map((a) => a.sessionId)).toEqual(['ends-soon', 'ends-late']);
  const expiries = answer.approvals.map((a) => ms(a.expiresAt));
  expect(expiries).toEqual([...expiries].sort((x, y) => x - y));
  const shown = await dispatchctlAt(() => d.address)('approvals');
  expect(shown.out.indexOf('ends-soon')).toBeLessThan(shown.out.indexOf('ends-late'));
  expect(shown.out.indexOf('ends-soon')).toBeGreaterThanOrEqual(0);
  await d.dispatch.endSession({ sessionId: 'ends-late' });
  await d.dispatch.endSession({ sessionId: 'ends-soon' });
  await Promise.all([late, soon]);
});

test('past 100 waits, the page holds the first to expire, the one asked last with a short deadline included', async () => {
  const pending = Array.from({ length: 100 }, (_, i) => refund(`many${i}`));
  await listedCount(100);
  pending.push(refund('last-but-soonest', 8_000));
  const answer = await until(async () => {
    const found = await d.dispatch.listApprovals({});
    return found.truncated ? found : undefined;
  }, 'more than a page waiting', 10_000);
  expect(answer.approvals.length).toBe(100);
  expect(answer.approvals[0]!.sessionId).toBe('last-but-soonest');
  for (let i = 0; i < 100; i++) await d.dispatch.endSession({ sessionId: `many${i}` });
  await d.dispatch.endSession({ sessionId: 'last-but-soonest' });
  await Promise.all(pending);
});
