import * as grpc from '@grpc/grpc-js';
import { DispatchMode } from '../../gen/dispatch/v1/dispatch_pb';
import { defaultGuards, retryTreeReflector, type Guards } from '../../src/pipeline';
import { createParallelDispatcher } from '../../src/waves';
import { errorReason } from '../guards/helpers';
import { json, startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';
import { until } from '../helpers/until';

// A parallel turn whose call throws a hard error answers at once, while the siblings it aborted
// may still be unwinding: here a pre-tool hook (given in code by an embedding) that does not look
// at its signal holds each `held` call until the test opens its gate. The turn must keep its
// admission place (limits.max_turns_in_flight) until they have unwound, at most for the unwind
// wait's bound, or a client that triggers hard errors gets unbounded work running past the limit.

const MAX_TURNS = 2;
/** The unwind wait's bound in dispatch-parallel.ts (UNWIND_WAIT_MS). */
const UNWIND_WAIT_MS = 5_000;

let hooksRunning = 0;
let hooksPeak = 0;
let openGate: () => void = () => undefined;
let gate = Promise.resolve();
function closeGate(): void {
  gate = new Promise<void>((resolve) => (openGate = resolve));
}

const guards: Guards = {
  ...defaultGuards(retryTreeReflector),
  preHook: async (input) => {
    if (input.tool.name !== 'held') return { action: 'allow' };
    hooksRunning++;
    hooksPeak = Math.max(hooksPeak, hooksRunning);
    await gate;
    hooksRunning--;
    return { action: 'allow' };
  },
};

let tools: ToolServer;
let d: TestDispatch;

beforeAll(async () => {
  tools = await startToolServer({ '/ok': json({ ok: true }) });
  const tool = (name: string, extra = '') => `  - { name: ${name}, effect: read_only, concurrency_safe: true, http: { url: "${tools.url}/ok" }${extra} }\n`;
  d = await startDispatch(
    `limits: { max_turns_in_flight: ${MAX_TURNS} }\ntools:\n${tool('held')}${tool('loopy', ', loop: { stop_threshold: 1 }')}`,
    { guards },
    { parallel: createParallelDispatcher() },
  );
  // loopy's first answer in the session is recorded; every identical call after it stops the turn
  // ABORTED LOOP_DETECTED at its loop pre-check, records nothing, and so stops the next one too.
  await d.dispatch.dispatch({ sessionId: 'loops', calls: [{ id: 'first', name: 'loopy', arguments: '{"q":1}' }] });
});
afterAll(async () => {
  openGate();
  await d.close();
  await tools.close();
});
beforeEach(() => {
  closeGate();
  hooksPeak = hooksRunning;
});
afterEach(async () => {
  openGate();
  await until(() => (hooksRunning === 0 && d.server.turns.inFlight === 0 ? true : undefined), 'the turns to unwind');
});

let turns = 0;
/** A parallel turn: `held` waits in its hook while `loopy` ends the turn; its gRPC status and reason. */
async function failingTurn(): Promise<{ code: grpc.status; reason: string | undefined }> {
  const n = turns++;
  const calls = [
    { id: `held-${n}`, name: 'held', arguments: `{"n":${n}}` },
    { id: `loopy-${n}`, name: 'loopy', arguments: '{"q":1}' },
  ];
  const error = await d.dispatch.dispatch({ sessionId: 'loops', mode: DispatchMode.PARALLEL, calls }).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!error) throw new Error('the turn succeeded; it should have stopped at the loop pre-check');
  return { code: (error as grpc.ServiceError).code, reason: errorReason(error) };
}

test('after hard errors, no more turns run than max_turns_in_flight: a turn keeps its place until its aborted calls unwind, and answers at once', async () => {
  // Both turns answer while their held calls still wait at the closed gate.
  const first = await Promise.all([failingTurn(), failingTurn()]);
  expect(first).toEqual([
    { code: grpc.status.ABORTED, reason: 'LOOP_DETECTED' },
    { code: grpc.status.ABORTED, reason: 'LOOP_DETECTED' },
  ]);
  expect(hooksRunning).toBe(MAX_TURNS);

  // The client tries again at once, again and again: the replica is full while the work runs.
  const again = [];
  for (let round = 0; round < 3; round++) again.push(...(await Promise.all([failingTurn(), failingTurn()])));
  expect(hooksPeak).toBe(MAX_TURNS);
  expect(again).toEqual(Array(6).fill({ code: grpc.status.RESOURCE_EXHAUSTED, reason: 'OVERLOADED' }));
  expect(d.server.turns.inFlight).toBe(MAX_TURNS);

  // Once the aborted calls have unwound, the places come back.
  openGate();
  await until(() => (d.server.turns.inFlight === 0 ? true : undefined), 'the places to come back', 2_000);
  closeGate();
  expect(await failingTurn()).toEqual({ code: grpc.status.ABORTED, reason: 'LOOP_DETECTED' });
});

test('the place is held no longer than the unwind wait: a hook that never returns does not keep the replica full', async () => {
  const started = Date.now();
  await Promise.all([failingTurn(), failingTurn()]);
  expect(d.server.turns.inFlight).toBe(MAX_TURNS);
  expect(await failingTurn()).toEqual({ code: grpc.status.RESOURCE_EXHAUSTED, reason: 'OVERLOADED' });
  await until(() => (d.server.turns.inFlight === 0 ? true : undefined), 'the places to come back', UNWIND_WAIT_MS + 3_000);
  // The hooks still wait at the gate: the bound let the places go, not the calls' end.
  expect(hooksRunning).toBe(MAX_TURNS);
  expect(Date.now() - started).toBeGreaterThanOrEqual(UNWIND_WAIT_MS - 100);
  expect(await failingTurn()).toEqual({ code: grpc.status.ABORTED, reason: 'LOOP_DETECTED' });
}, 15_000);
