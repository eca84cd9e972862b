import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../../src/errors';
import { fromWire, parseRelayMessage, toWire } from '../../src/executors/worker/relay-messages';
import { withWait } from '../../src/pipeline/loop-block';
import { withoutScratchPaths } from '../../src/session/scratch-paths';

// Found in review, after unit/retold-flags: three more places rebuilt a DispatchError field by
// field. A failure relayed from the replica holding the worker lost its retry_after_ms and what
// the breaker reads of it (no host of the tool: another replica's "no worker is connected"; dispatch's
// own trouble), as the wire form carried kind, phase, message, recoverable and suggestion only; the
// loop guard's wait (withWait) and a built-in's error with its scratch paths hidden dropped the flags.

function flagged(): DispatchError {
  return new DispatchError(ErrorKind.UNAVAILABLE, 'no worker is connected for tool "t" in /tmp/scratch/s1; the call was not executed', {
    phase: 'before',
    recoverable: true,
    suggestion: 'try again later',
    retryAfterMs: 5000,
    httpStatus: 503,
    notRetriedWithinTurn: true,
    notTheTool: true,
    noHost: true,
  });
}

const FIELDS = ['kind', 'phase', 'message', 'recoverable', 'suggestion', 'retryAfterMs', 'httpStatus', 'notRetriedWithinTurn', 'notTheTool', 'noHost'] as const;
const fieldsOf = (error: DispatchError) => Object.fromEntries(FIELDS.map((f) => [f, error[f]]));

test('a failure crosses the relay with every field', () => {
  const error = flagged();
  const text = JSON.stringify({ t: 'reply', id: 'r1', error: toWire(error) });
  const message = parseRelayMessage(text);
  expect(message?.t).toBe('reply');
  const back = fromWire((message as { error: Parameters<typeof fromWire>[0] }).error);
  expect(fieldsOf(back)).toEqual(fieldsOf(error));
});

test("an older replica's wire form (without the new fields), and malformed ones, read as before", () => {
  const old = fromWire({ kind: ErrorKind.TIMEOUT, phase: 'during', message: 'm', recoverable: false });
  expect(old).toMatchObject({ kind: ErrorKind.TIMEOUT, phase: 'during', recoverable: false });
  expect([old.retryAfterMs, old.httpStatus, old.notRetriedWithinTurn, old.notTheTool, old.noHost]).toEqual([undefined, undefined, undefined, undefined, undefined]);
  const odd = fromWire(JSON.parse('{"kind":14,"phase":"before","message":"m","recoverable":true,"retryAfterMs":-1,"httpStatus":"503","noHost":"yes","notTheTool":1}'));
  expect([odd.retryAfterMs, odd.httpStatus, odd.noHost, odd.notTheTool]).toEqual([undefined, undefined, undefined, undefined]);
});

test("the loop guard's wait keeps the error's flags", () => {
  const told = withWait(flagged(), 30_000);
  expect(told).toMatchObject({ retryAfterMs: 30_000, notTheTool: true, noHost: true, notRetriedWithinTurn: true, httpStatus: 503 });
});

test("a built-in's error with its scratch paths hidden keeps the flags", () => {
  const told = withoutScratchPaths(flagged(), ['/tmp/scratch/s1']) as DispatchError;
  expect(told.message).not.toContain('/tmp/scratch/s1');
  expect(told).toMatchObject({ retryAfterMs: 5000, notTheTool: true, noHost: true, notRetriedWithinTurn: true, httpStatus: 503 });
});
