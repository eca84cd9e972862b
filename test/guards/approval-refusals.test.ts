import { ErrorKind, type ToolCall } from '../../gen/dispatch/v1/dispatch_pb';
import { createPipeline } from '../../src/app';
import { parseConfig } from '../../src/config';
import { SILENT_LOGGER } from '../../src/log';
import { defaultGuards, executeCall, NOOP_OBSERVER, retryTreeReflector, type Guards, type TurnContext } from '../../src/pipeline';
import { createMemoryStore, type Store } from '../../src/store';
import { json, startToolServer, type ToolServer } from '../helpers/servers';

// The refusals of an `ask` that are no denial: too many approvals waiting (this replica's room
// for them is full), and a call let through unasked for an idempotency record that ended before
// its claim. Both are recoverable UNAVAILABLE: the same call, made again, is asked about.

let tools: ToolServer;
beforeAll(async () => {
  tools = await startToolServer({ '/charge': json({ charged: true }) });
});
afterAll(async () => {
  await tools?.close();
});

// timeout_ms within the turn's 10 s deadline: a side-effecting call is retried only when its
// retry could run its whole timeout before the deadline (retry-room.ts).
const config = (maxAttempts: number) =>
  parseConfig(`tools:\n  - { name: charge, effect: side_effect, timeout_ms: 5000, retry: { max_attempts: ${maxAttempts}, initial_backoff_ms: 1 }, input_schema: '{"type":"object"}', http: { url: "${tools.url}/charge" } }\n`, 'ask.yaml');

async function run(guards: Guards, maxAttempts: number, store?: Store) {
  const deps = createPipeline({ config: config(maxAttempts), logger: SILENT_LOGGER, guards, store });
  const observer = NOOP_OBSERVER.turn({ tenant: 't', sessionId: 's', turn: 1, callCount: 1 });
  const turn: TurnContext = { tenant: 't', sessionId: 's', turn: 1, signal: new AbortController().signal, deadline: Date.now() + 10_000, interactive: true, observer };
  const call = { id: 'c', name: 'charge', arguments: '{"amount":5}' } as ToolCall;
  try {
    return await executeCall(deps, turn, call, observer.call({ toolCallId: 'c', tool: 'charge', arguments: call.arguments }));
  } finally {
    await deps.store.close();
  }
}

test('an ask refused because too many approvals wait is recoverable UNAVAILABLE, suggesting to call again later', async () => {
  const before = tools.count('/charge');
  // Refused at once, never waiting: as the approvals do past their room.
  const guards: Guards = { ...defaultGuards(retryTreeReflector), preHook: () => ({ action: 'ask', reason: 'money' }), awaitApproval: async () => false };
  const result = await run(guards, 1);
  expect(result.error).toMatchObject({
    kind: ErrorKind.UNAVAILABLE,
    recoverable: true,
    message: 'needs approval, and too many approvals are waiting already; try again later: money',
    suggestion: 'Call it again in a while, when fewer approvals are waiting, or do something else first.',
  });
  expect(tools.count('/charge')).toBe(before);
});

test('a call let through for a record gone by its claim runs nothing unasked; its retry is asked about', async () => {
  const before = tools.count('/charge');
  let asked = 0;
  const guards: Guards = {
    ...defaultGuards(retryTreeReflector),
    preHook: () => ({ action: 'ask', reason: 'money' }),
    awaitApproval: async (_id, _signal, _tenant, waiting) => {
      asked++;
      waiting?.();
      return true;
    },
  };
  // The first look finds a record (one that expires, or whose session ends, before the claim).
  const memory = createMemoryStore();
  let looks = 0;
  const store: Store = { ...memory, findRecord: (scope, key) => (looks++ === 0 ? 'completed' : memory.findRecord(scope, key)) };
  const result = await run(guards, 2, store);
  // Attempt 1 was refused, its claim given back; attempt 2 was asked about, approved, and ran.
  expect(result).toMatchObject({ isError: false, output: '{"charged":true}', attempts: 2, idempotentReplay: false });
  expect([looks, asked, tools.count('/charge') - before]).toEqual([2, 1, 1]);

  looks = 0;
  asked = 0;
  const once = await run(guards, 1, { ...createMemoryStore(), findRecord: () => 'completed' });
  expect(once.error).toMatchObject({ kind: ErrorKind.UNAVAILABLE, recoverable: true, suggestion: 'Call it again: it will be asked for approval.' });
  expect(once.error?.message).toMatch(/^needs approval \(money\); an identical earlier call's record, which would have answered it, ended while it was checked/);
  expect([asked, tools.count('/charge') - before]).toEqual([0, 1]);
});
