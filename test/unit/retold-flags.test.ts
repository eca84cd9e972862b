import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../../src/errors';
import { failedThenRefused } from '../../src/pipeline/breaker-refusal';
import { mayHaveRun, sideEffectFailure } from '../../src/pipeline/side-effect-failure';
import type { ResolvedTool } from '../../src/registry';

// Found in review: the side-effect rules and the breaker's retelling rebuilt a DispatchError field
// by field and dropped notTheTool and noHost (the breaker's decisions read them: dispatch's own
// trouble is not counted against the tool, and a breaker opened for want of a host half-opens when
// one returns). They now retell the error as redaction and bounding do, every field kept but those
// they change.
const tool = { keyFields: [], idempotencyTtlSeconds: 3600 } as unknown as ResolvedTool;

function flagged(options: ConstructorParameters<typeof DispatchError>[2] = {}): DispatchError {
  return new DispatchError(ErrorKind.UNAVAILABLE, 'the link to the replica holding the worker dropped', { notTheTool: true, noHost: true, httpStatus: 503, ...options });
}

test('mayHaveRun keeps the flags and clears what invites calling again', () => {
  const error = flagged({ phase: 'during', recoverable: true, retryAfterMs: 1000, notRetriedWithinTurn: true });
  const told = mayHaveRun(error, tool);
  expect(told).toMatchObject({ kind: ErrorKind.UNAVAILABLE, message: error.message, phase: 'during', recoverable: false, httpStatus: 503, notTheTool: true, noHost: true });
  expect(told.retryAfterMs).toBeUndefined();
  expect(told.notRetriedWithinTurn).toBeUndefined();
  expect(told.suggestion).toMatch(/may or may not have taken effect/);
  expect(told.cause).toBe(error);
});

test("a side-effecting failure's retelling keeps the flags, during and after", () => {
  const during = sideEffectFailure(flagged({ phase: 'during', recoverable: true, suggestion: 'the worker went away' }), tool, true);
  expect(during).toMatchObject({ phase: 'during', recoverable: false, suggestion: 'the worker went away', notTheTool: true, noHost: true });
  const after = sideEffectFailure(flagged({ phase: 'after', recoverable: true, retryAfterMs: 500 }), tool, true);
  expect(after).toMatchObject({ phase: 'after', recoverable: false, notTheTool: true, noHost: true });
  expect(after.retryAfterMs).toBeUndefined();
  expect(after.suggestion).toMatch(/idempotency record expires \(3600 s\)/);
});

test('a failure the breaker then refused keeps its flags', () => {
  const refusal = new DispatchError(ErrorKind.BREAKER_OPEN, 'open', { recoverable: true, retryAfterMs: 30_000 });
  const told = failedThenRefused(flagged({ phase: 'during', recoverable: true, notRetriedWithinTurn: true }), refusal);
  expect(told).toMatchObject({ phase: 'during', recoverable: true, retryAfterMs: 30_000, httpStatus: 503, notTheTool: true, noHost: true });
  expect(told.notRetriedWithinTurn).toBeUndefined();
  expect(told.message).toMatch(/circuit breaker opened/);
});

test('retold clears a field given as undefined and keeps the others', () => {
  const error = flagged({ suggestion: 'wait', retryAfterMs: 5 });
  const told = error.retold('again', { suggestion: undefined });
  expect(told).toMatchObject({ message: 'again', retryAfterMs: 5, notTheTool: true, noHost: true, httpStatus: 503 });
  expect(told.suggestion).toBeUndefined();
  expect(told.cause).toBe(error);
});
