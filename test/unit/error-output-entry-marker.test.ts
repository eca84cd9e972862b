import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError, MAX_ERROR_MESSAGE_CHARS } from '../../src/errors';
import { codePointLength } from '../../src/pipeline';
import { boundedFailure } from '../../src/pipeline/bound-failure';
import { errorResult } from '../../src/pipeline/results';
import { errorTextsOf, leastError } from '../../src/server/least-error';

// Found in review: a failure's message held to MAX_ERROR_MESSAGE_CHARS where it entered the call
// ends with its own marker counting what it left out of the whole. The error JSON (its tool's
// max_result_chars, bound-error.ts) cut that text again and counted from it, the first marker's
// characters among the "omitted": a 100,000-character message was shown to the model as its head
// and "[8777 characters omitted]", and cut to its least (least-error.ts) the JSON said 16,391
// where its ToolError said 99,976.

const WHOLE = 100_000;
const failure = () => boundedFailure(new DispatchError(ErrorKind.TOOL_ERROR, 'x'.repeat(WHOLE), { phase: 'after', suggestion: 'y'.repeat(WHOLE) }));
/** The code points a text cut to its head and a marker keeps, and those it says it left out. */
const counts = (text: string) => {
  const [, head, omitted] = /^([^]*) \.\.\. \[(\d+) characters omitted\]$/.exec(text)!;
  return { kept: codePointLength(head!), omitted: Number(omitted) };
};

test("the error JSON's message and suggestion, cut again, count what they leave out of the whole text", () => {
  const error = failure();
  expect(counts(error.message)).toEqual({ kept: MAX_ERROR_MESSAGE_CHARS, omitted: WHOLE - MAX_ERROR_MESSAGE_CHARS });
  const json = JSON.parse(errorResult('c', 't', error, 1, 1, [], 8_000).output) as { message: string; suggestion: string };
  for (const [text, letter] of [[json.message, 'x'], [json.suggestion, 'y']] as const) {
    const { kept, omitted } = counts(text);
    expect(text.startsWith(letter.repeat(kept))).toBe(true);
    expect(kept + omitted).toBe(WHOLE);
  }
});

test('cut to its least, its error JSON and its ToolError say the same', () => {
  const result = errorResult('c', 't', failure(), 1, 1, [], 8_000);
  const least = leastError(result, errorTextsOf(result), 't');
  const json = JSON.parse(least.output) as { message: string; suggestion: string };
  expect(json.message).toBe(`${'x'.repeat(24)} ... [${WHOLE - 24} characters omitted]`);
  expect(least.error!.message).toBe(json.message);
  expect(least.error!.suggestion).toBe(json.suggestion);
});
