import { createPipeline } from '../../src/app';
import { parseConfig } from '../../src/config';
import { SILENT_LOGGER } from '../../src/log';
import { defaultGuards, executeCall, NOOP_OBSERVER, retryTreeReflector, type BreakerGate, type TurnContext } from '../../src/pipeline';

// An attempt's time is the tool's timeout or what is left of the caller's deadline, whichever is
// shorter. Out of time because of the caller's deadline is the caller's doing: the call ends as
// the RPC does (cancelled, reported DEADLINE_EXCEEDED), and the tool's breaker counts nothing.
// Counted as the tool's timeout, one tenant's short deadlines opened a shared tool's breaker.

test("an attempt cut by the caller's deadline is no timeout of the tool's", async () => {
  const records: { ok: boolean; counts: boolean }[] = [];
  const breaker: BreakerGate = { isOpen: () => false, tryAcquire: () => ({ probe: false, generation: 0 }), record: (_tool, _ticket, outcome) => void records.push({ ok: outcome.ok, counts: outcome.counts }) };
  const config = parseConfig('tools:\n  - { name: lookup, effect: read_only, timeout_ms: 30000, retry: { max_attempts: 1 }, builtin: { name: sleep } }\n', 'deadline.yaml');
  const deps = createPipeline({ config, logger: SILENT_LOGGER, guards: { ...defaultGuards(retryTreeReflector), breaker } });
  const observer = NOOP_OBSERVER.turn({ tenant: 't', sessionId: 's', turn: 1, callCount: 1 });
  // The turn's signal is left alone: only the attempt's own timer, set to the deadline, fires.
  const turn: TurnContext = { tenant: 't', sessionId: 's', turn: 1, signal: new AbortController().signal, deadline: Date.now() + 50, interactive: false, observer };
  const call = { id: 'c', name: 'lookup', arguments: '{"ms":1000}' } as Parameters<typeof executeCall>[2];
  await expect(executeCall(deps, turn, call, observer.call({ toolCallId: 'c', tool: 'lookup', arguments: call.arguments }))).rejects.toMatchObject({ reason: 'CANCELLED' });
  expect(records).toEqual([{ ok: false, counts: false }]);
  await deps.store.close();
});
