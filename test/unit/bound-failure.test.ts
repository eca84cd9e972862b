import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError, MAX_ERROR_MESSAGE_CHARS } from '../../src/errors';
import { workerToolError } from '../../src/executors/worker';
import { boundedFailure, errorTextHead } from '../../src/pipeline/bound-failure';

// A failure's message and suggestion are held to MAX_ERROR_MESSAGE_CHARS where it enters the call
// (thrownFailure); the service test, error-message-entry-bound, shows it end to end.

const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

test('a text over the bound keeps its first code points and counts the rest; one within it is itself', () => {
  const emoji = '\u{1F600}'.repeat(MAX_ERROR_MESSAGE_CHARS + 10);
  expect(errorTextHead(emoji)).toBe(`${'\u{1F600}'.repeat(MAX_ERROR_MESSAGE_CHARS)} ... [10 characters omitted]`);
  // 2 x the bound in UTF-16 units, yet within it in code points.
  const within = '\u{1F600}'.repeat(MAX_ERROR_MESSAGE_CHARS);
  expect(errorTextHead(within)).toBe(within);
  expect(errorTextHead('x'.repeat(30), 20)).toBe(`${'x'.repeat(20)} ... [10 characters omitted]`);
});

test('a failure cut keeps every other field, the failure itself as its cause; one that fits is returned as it is', () => {
  const long = new DispatchError(ErrorKind.UNAVAILABLE, 'm'.repeat(MAX_ERROR_MESSAGE_CHARS + 1), {
    phase: 'during',
    recoverable: true,
    suggestion: 's'.repeat(MAX_ERROR_MESSAGE_CHARS + 2),
    retryAfterMs: 1_500,
    httpStatus: 503,
    notRetriedWithinTurn: true,
    notTheTool: true,
    noHost: true,
  });
  const cut = boundedFailure(long);
  expect(cut.message).toBe(`${'m'.repeat(MAX_ERROR_MESSAGE_CHARS)} ... [1 characters omitted]`);
  expect(cut.suggestion).toBe(`${'s'.repeat(MAX_ERROR_MESSAGE_CHARS)} ... [2 characters omitted]`);
  expect({ ...cut, message: undefined, suggestion: undefined }).toEqual({ ...long, message: undefined, suggestion: undefined });
  expect(cut.cause).toBe(long);
  const short = new DispatchError(ErrorKind.TOOL_ERROR, 'short', { suggestion: 'fine' });
  expect(boundedFailure(short)).toBe(short);
});

test("a worker's error message is cut at 2,000 units never through a surrogate pair", () => {
  const message = workerToolError('t', `${'a'.repeat(1_999)}${'\u{1F600}'.repeat(5)}`).message;
  expect(LONE.test(message)).toBe(false);
  expect(message).toBe(`tool "t" reported an error: ${'a'.repeat(1_999)}...`);
});
