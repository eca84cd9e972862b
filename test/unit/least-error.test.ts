import fc from 'fast-check';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../../src/errors';
import { codePointLength } from '../../src/pipeline';
import { errorResult } from '../../src/pipeline/results';
import { errorTextsOf, leastError, leastText } from '../../src/server/least-error';

// An error text at its least: a head within its bytes as JSON escapes it, never a split surrogate
// pair, and a marker counting what was left out of the whole text (a text bound-error.ts cut says
// in its own marker how long it was).

const pieces = fc.constantFrom('a', '"', '\\', '\n', '\u0001', 'é', '错', '😀', '\ud83d', '\ude00', ' ... [', ' ');
const texts = fc.array(pieces, { maxLength: 200 }).map((parts) => parts.join(''));

test('a head within the bytes, the marker counting the rest, shorter than the text or the text itself', () => {
  fc.assert(
    fc.property(texts, fc.constantFrom(0, 1, 5, 24, 64), (text, maxBytes) => {
      const least = leastText(text, maxBytes);
      if (least === text) return;
      const [, head, omitted] = /^(?:([^]*) \.\.\. )?\[(\d+) characters omitted\]$/.exec(least)!;
      const kept = head ?? '';
      expect(text.startsWith(kept)).toBe(true);
      expect(Buffer.byteLength(JSON.stringify(kept)) - 2).toBeLessThanOrEqual(maxBytes);
      expect(codePointLength(kept) + Number(omitted)).toBe(codePointLength(text));
      expect(/[\ud800-\udbff]$/.test(kept) && /^[\udc00-\udfff]/.test(text.slice(kept.length))).toBe(false);
      expect(Buffer.byteLength(JSON.stringify(least))).toBeLessThan(Buffer.byteLength(JSON.stringify(text)));
    }),
  );
});

test("a message bound-error.ts cut is counted from its whole; the error JSON stays valid with every field", () => {
  const message = `the tool answered HTTP 400: ${'错误'.repeat(400)}`;
  const result = errorResult('c1', 'h', new DispatchError(ErrorKind.TOOL_ERROR, message, { phase: 'during' }), 1, 5, ['w'], 300);
  const before = structuredClone(result);
  const least = leastError(result, errorTextsOf(result), 'h');
  const json = JSON.parse(least.output);
  expect(Object.keys(json)).toEqual(Object.keys(JSON.parse(result.output)));
  expect(json.message).toBe(`the tool answered HTTP 4 ... [${codePointLength(message) - 24} characters omitted]`);
  expect(least.error!.message).toBe(json.message);
  expect(least.warnings).toEqual(['error texts cut to fit max_response_bytes (other warnings dropped)']);
  // The result it was cut from is unchanged.
  expect(result).toEqual(before);
  // Its output's message was cut by bound-error.ts, to 80 code points: the least counts from the whole.
  expect(JSON.parse(result.output).message).toMatch(/ \.\.\. \[\d+ characters omitted\]$/);
});
