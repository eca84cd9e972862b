import fc from 'fast-check';
import { boundResult, codePointLength, sliceCodePoints } from '../../src/pipeline';

describe('boundResult', () => {
  test('leaves text within the cap unchanged', () => {
    expect(boundResult('hello', 8000)).toEqual({ text: 'hello', truncated: false, totalChars: 5 });
  });

  test('keeps head and tail around the exact marker, all within the cap', () => {
    const text = 'A'.repeat(5000) + 'M'.repeat(10_000) + 'Z'.repeat(5000);
    const bounded = boundResult(text, 8000);
    expect(bounded.truncated).toBe(true);
    expect(bounded.text.length).toBe(8000);
    const omitted = 20_000 - (8000 - '\n\n... [12058 characters omitted by dispatch layer] ...\n\n'.length);
    expect(bounded.text).toContain(`\n\n... [${omitted} characters omitted by dispatch layer] ...\n\n`);
    expect(bounded.text.startsWith('A'.repeat(3000))).toBe(true);
    expect(bounded.text.endsWith('Z'.repeat(3000))).toBe(true);
  });

  test('counts code points, never splitting a surrogate pair', () => {
    const text = '😀'.repeat(10_000);
    const bounded = boundResult(text, 100);
    expect(codePointLength(bounded.text)).toBeLessThanOrEqual(100);
    expect(bounded.text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    expect(bounded.totalChars).toBe(10_000);
  });

  test('property: never longer than the cap, and untouched when it fits', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 3000, unit: 'grapheme' }), fc.integer({ min: 60, max: 2000 }), (text, cap) => {
        const bounded = boundResult(text, cap);
        expect(codePointLength(bounded.text)).toBeLessThanOrEqual(Math.max(cap, 0));
        if (codePointLength(text) <= cap) expect(bounded.text).toBe(text);
      }),
    );
  });
});

// Found in review: ReadResult built an array of every code point of the stored text for each page
// (0.5-2.9 s of event loop per page of a 16 Mi-character result, quadratic over the pages), and
// counted a lone high surrogate as half a code point while slicing it as one, so paging a text
// holding one never ended. Lengths and slices now agree with Array.from, without building it.
describe('code points without arrays', () => {
  const units = fc.array(fc.constantFrom('a', 'é', '😀', '\ud83d', '\ude00', '\udbff', 'z'), { maxLength: 40 }).map((parts) => parts.join(''));

  test('codePointLength and sliceCodePoints agree with Array.from, lone surrogates included', () => {
    fc.assert(
      fc.property(units, fc.nat(45), fc.nat(45), (text, offset, limit) => {
        const points = Array.from(text);
        return codePointLength(text) === points.length && sliceCodePoints(text, offset, limit) === points.slice(offset, offset + limit).join('');
      }),
      { numRuns: 3000 },
    );
  });

  test('boundResult keeps the head and tail Array.from would, within its cap', () => {
    fc.assert(
      fc.property(units, fc.integer({ min: 60, max: 80 }), (text, max) => {
        const bounded = boundResult(text, max);
        return Array.from(bounded.text).length <= max && bounded.totalChars === Array.from(text).length;
      }),
      { numRuns: 1000 },
    );
  });

  test('paging a text with lone surrogates by next_offset ends', () => {
    const text = '\ud83d\ud83dabc😀\ude00';
    const total = codePointLength(text);
    let offset = 0;
    let pages = 0;
    let read = '';
    while (offset < total && pages < 100) {
      const page = sliceCodePoints(text, offset, 1);
      read += page;
      offset += codePointLength(page);
      pages++;
    }
    expect(read).toBe(text);
    expect(pages).toBe(Array.from(text).length);
  });

  test('a 16 Mi-character text is bounded and paged in milliseconds, emoji or not', () => {
    for (const text of ['a'.repeat(16 * 1024 * 1024), `${'😀'.repeat(4 * 1024 * 1024)}x`]) {
      const started = performance.now();
      expect(boundResult(text, 8_000).truncated).toBe(true);
      const total = codePointLength(text);
      expect(sliceCodePoints(text, total - 10, 8_000)).toHaveLength(text.endsWith('x') ? 19 : 10);
      expect(performance.now() - started).toBeLessThan(1_500);
    }
  });
});
