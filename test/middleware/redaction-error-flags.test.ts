import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../../src/errors';
import { startApp } from '../helpers/servers';

// Found in review: redaction rebuilt a DispatchError whose message quoted a secret by listing its
// fields by hand, and dropped the flags added after it (notRetriedWithinTurn, notTheTool, noHost):
// a failure that says a retry within the turn would meet it again was retried, after its
// retry_after_ms, because its message held a password. Every copy now goes through
// DispatchError.retold, which keeps every field.

const DSN = 'postgres://admin:S3cretPassw0rd@db.internal/app';

test('a failure redacted keeps its flags: one not to be retried within the turn is not', async () => {
  let runs = 0;
  const failing = async (): Promise<string> => {
    runs++;
    throw new DispatchError(ErrorKind.UNAVAILABLE, `the pool of ${DSN} is being failed over`, { phase: 'before', recoverable: true, retryAfterMs: 1_500, notRetriedWithinTurn: true });
  };
  const d = await startApp("tools:\n  - { name: pooled, effect: read_only, input_schema: '{\"type\":\"object\"}', builtin: { name: pooled } }", { pipeline: { builtins: new Map([['pooled', failing]]) } });
  try {
    const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'pooled', arguments: '{}' }] });
    expect(results[0]!.error?.message).toBe('the pool of postgres://admin:[REDACTED:secret]@db.internal/app is being failed over');
    expect(results[0]!.error?.retryAfterMs).toBe(1_500);
    expect([runs, results[0]!.attempts]).toEqual([1, 1]);
  } finally {
    await d.app.close();
  }
});

test('retold keeps every field but the texts, and names the failure as its cause unless told', () => {
  const root = new Error('root');
  const error = new DispatchError(ErrorKind.TOOL_ERROR, 'm', { phase: 'after', recoverable: true, suggestion: 's', retryAfterMs: 7, httpStatus: 503, notRetriedWithinTurn: true, notTheTool: true, noHost: true, cause: root });
  const fields = (e: DispatchError) => [e.kind, e.phase, e.recoverable, e.retryAfterMs, e.httpStatus, e.notRetriedWithinTurn, e.notTheTool, e.noHost];
  const retold = error.retold('n');
  expect([retold.message, retold.suggestion, retold.cause]).toEqual(['n', 's', error]);
  expect(fields(retold)).toEqual(fields(error));
  const other = error.retold('o', { suggestion: undefined, cause: root });
  expect([other.message, other.suggestion, other.cause]).toEqual(['o', undefined, root]);
  expect(fields(other)).toEqual(fields(error));
});
