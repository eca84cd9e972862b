import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError, type FailurePhase } from '../../src/errors';
import { backoffDelay, decideRetry } from '../../src/pipeline';

const policy = { maxAttempts: 3, initialBackoffMs: 100, maxBackoffMs: 1000, multiplier: 2, jitter: 0.5 };
const err = (kind: ErrorKind, phase: FailurePhase, recoverable = true, httpStatus?: number, retryAfterMs?: number) =>
  new DispatchError(kind, 'x', { phase, recoverable, httpStatus, retryAfterMs });
const decide = (error: DispatchError, readOnly: boolean, attempt = 1) => decideRetry({ error, readOnly, attempt, policy });

describe('the retry decision tree', () => {
  test('read-only tools retry transient failures in every phase', () => {
    expect(decide(err(ErrorKind.UNAVAILABLE, 'before'), true).retry).toBe(true);
    expect(decide(err(ErrorKind.TIMEOUT, 'during'), true).retry).toBe(true);
    expect(decide(err(ErrorKind.TOOL_ERROR, 'after', true, 503), true).retry).toBe(true);
  });

  test('side-effecting tools retry only failures before execution', () => {
    expect(decide(err(ErrorKind.UNAVAILABLE, 'before'), false).retry).toBe(true);
    expect(decide(err(ErrorKind.STORE_UNAVAILABLE, 'before'), false).retry).toBe(true);
    expect(decide(err(ErrorKind.TIMEOUT, 'during'), false)).toEqual({ retry: false, reason: 'a side-effecting tool is not retried after a failure during execution' });
    expect(decide(err(ErrorKind.TOOL_ERROR, 'after', true, 503), false).retry).toBe(false);
  });

  test.each([400, 401, 403, 404, 422])('HTTP %i is never retried', (status) => {
    expect(decide(err(ErrorKind.TOOL_ERROR, 'after', true, status), true)).toEqual({ retry: false, reason: `HTTP ${status} is never retried` });
  });

  test.each([ErrorKind.INVALID_ARGUMENTS, ErrorKind.UNKNOWN_TOOL, ErrorKind.BLOCKED, ErrorKind.BREAKER_OPEN, ErrorKind.IN_PROGRESS, ErrorKind.OUTCOME_UNKNOWN, ErrorKind.LOOP_BLOCKED, ErrorKind.CANCELLED, ErrorKind.UNEXPECTED])('kind %i is never retried', (kind) => {
    expect(decide(err(kind, 'before'), true).retry).toBe(false);
  });

  test('a failure that is not transient is not retried', () => {
    expect(decide(err(ErrorKind.TOOL_ERROR, 'after', false, 500), true)).toEqual({ retry: false, reason: 'the failure is not transient' });
  });

  test('stops when every attempt is used', () => {
    expect(decide(err(ErrorKind.TIMEOUT, 'during'), true, 2).retry).toBe(true);
    expect(decide(err(ErrorKind.TIMEOUT, 'during'), true, 3)).toEqual({ retry: false, reason: 'all 3 attempts used' });
  });

  test('backoff grows exponentially, is capped, jittered, and honours Retry-After', () => {
    expect(backoffDelay(1, policy, undefined, () => 0)).toBe(100);
    expect(backoffDelay(2, policy, undefined, () => 0)).toBe(200);
    expect(backoffDelay(3, policy, undefined, () => 1)).toBe(600);
    expect(backoffDelay(10, policy, undefined, () => 0)).toBe(1000);
    expect(backoffDelay(1, policy, 2500, () => 0)).toBe(2500);
    const decision = decide(err(ErrorKind.TOOL_ERROR, 'after', true, 429, 700), true);
    expect(decision.retry && decision.delayMs).toBeGreaterThanOrEqual(700);
  });
});
