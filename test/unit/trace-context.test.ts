import fc from 'fast-check';
import { formatTraceparent, hexWord, parseTraceparent, randomWord, wordsHex } from '../../src/events/trace-context';

describe('trace ids as 32-bit words', () => {
  test('wordsHex and hexWord are inverses, 8 lowercase digits per word, big-endian', () => {
    expect(wordsHex(0x0af76519, 0x16cd43dd)).toBe('0af7651916cd43dd');
    expect(wordsHex(0, 1, 0xffffffff, 0x80000000)).toBe('0000000000000001ffffffff80000000');
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 0xffffffff }), { minLength: 4, maxLength: 4 }), ([a, b, c, d]) => {
        const hex = wordsHex(a!, b!, c, d);
        expect(hex).toMatch(/^[0-9a-f]{32}$/);
        expect([0, 1, 2, 3].map((i) => hexWord(hex, i))).toEqual([a, b, c, d]);
        expect(wordsHex(a!, b!)).toBe(hex.slice(0, 16));
      }),
    );
  });

  test('randomWord gives unsigned 32-bit words that vary, past the refill of its pool', () => {
    const words = Array.from({ length: 3000 }, randomWord);
    expect(words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffffffff)).toBe(true);
    expect(new Set(words).size).toBeGreaterThan(2990);
  });

  test('a traceparent round-trips', () => {
    const header = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect(formatTraceparent(parseTraceparent(header)!)).toBe(header);
  });
});
