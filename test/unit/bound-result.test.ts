import fc from 'fast-check';
import { boundResult, codePointLength } from '../../src/pipeline';

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
