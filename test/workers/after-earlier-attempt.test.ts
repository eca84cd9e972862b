// A retry of a read-only call whose earlier attempt was sent to a worker: each refusal before
// running that said "the call was not executed" says instead that this attempt was not, and that
// the call may have run; its kind, phase and options are kept (the relayed case end to end:
// retry-after-reached-relay-down.test.ts).
import { ReplyError } from 'ioredis';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../../src/errors';
import { afterEarlierAttempt, noWorkerError, relayDown, relayLostAfterSend, tooLargeWhileRelayDown } from '../../src/executors/worker/worker-errors';

const EARLIER = 'an earlier attempt was sent to a worker (the call may or may not have run)';

test('too large while the relay is down: its own words, this attempt not executed, its options kept', () => {
  const told = afterEarlierAttempt('w_count', tooLargeWhileRelayDown('w_count', { workerId: 'small', bytes: 5_000_000, limit: { bytes: 4_194_304, from: 'assumed' } })) as DispatchError;
  expect(told.message).toBe(
    `no worker connected here can receive the call's assignment (5000000 bytes; worker "small" hosting "w_count" receives 4194304), and the link to other dispatch replicas (Redis) is down, so a worker there that may receive it could not be reached; this attempt was not executed; ${EARLIER}. Try again once the link is back`,
  );
  expect(told).toMatchObject({ kind: ErrorKind.UNAVAILABLE, phase: 'before', recoverable: true, notTheTool: true, notRetriedWithinTurn: true, retryAfterMs: 5_000 });
});

test('the relay down, and no worker, are retold; a refusal from another replica keeps its words and is corrected', () => {
  expect((afterEarlierAttempt('x', relayDown(new Error('gone'))) as DispatchError).message).toBe(`the link to other dispatch replicas (Redis) is down, so no worker could be reached; this attempt was not executed; ${EARLIER}`);
  // An error reply of Redis's is told by its code only (the rest names Redis's users and commands).
  const refused = relayDown(new ReplyError("NOPERM User relay has no permissions to run the 'publish' command"));
  expect(refused.message).toBe('Redis refused to pass the call on to the other dispatch replicas (its error reply NOPERM), so no worker could be reached; the call was not executed');
  expect((afterEarlierAttempt('x', refused) as DispatchError).message).toBe(`Redis refused to pass the call on to the other dispatch replicas (its error reply NOPERM), so no worker could be reached; this attempt was not executed; ${EARLIER}`);
  expect(relayDown(new ReplyError('weird reply')).message).toMatch(/^Redis refused .* \(its error reply ERR\)/);
  // True whether the earlier attempt's worker went away or the relay's link was lost after sending it (before: "a worker that went away").
  expect((afterEarlierAttempt('x', noWorkerError('x')) as DispatchError).message).toBe(`no worker is connected any longer for tool "x" to try the call again; ${EARLIER}`);
  const remote = new DispatchError(ErrorKind.TIMEOUT, 'the call reached the replica hosting "x" after its deadline; it was not executed', { phase: 'before', recoverable: true });
  const told = afterEarlierAttempt('x', remote) as DispatchError;
  expect(told.message).toBe(`the call reached the replica hosting "x" after its deadline; it was not executed (so said of this attempt only: ${EARLIER})`);
  expect(told).toMatchObject({ kind: ErrorKind.TIMEOUT, phase: 'before', recoverable: true });
});

test('a failure during or after running is left as it is', () => {
  const during = relayLostAfterSend('x', new Error('closed'));
  expect(afterEarlierAttempt('x', during)).toBe(during);
  expect(during).toMatchObject({ kind: ErrorKind.UNAVAILABLE, phase: 'during', recoverable: true, notTheTool: true });
  expect(during.notRetriedWithinTurn).toBeUndefined();
  const other = new Error('not ours');
  expect(afterEarlierAttempt('x', other)).toBe(other);
});
