import fc from 'fast-check';
import { inexactNumber } from '../../src/arguments/exact-numbers';

// Numbers JSON.parse would change on their way to the tool are found; nothing else is.

test.each([
  ['{"id":1234567890123456789}', '1234567890123456789'],
  ['{"id":-9007199254740993}', '-9007199254740993'],
  ['[1, 2, {"a": [9007199254740993]}]', '9007199254740993'],
  ['{"amount":1e999}', '1e999'],
  ['{"amount":-1E+400}', '-1E+400'],
  ['{"a":"\\"","id":12345678901234567890}', '12345678901234567890'],
])('%s: %s is found', (text, token) => {
  expect(inexactNumber(text)).toBe(token);
});

test.each([
  '{"id":"1234567890123456789"}',
  '{"note":"1e999 and 12345678901234567890 in a string","x":"\\\\"}',
  '{"id":9007199254740991}',
  '{"id":-9007199254740991}',
  '{"id":123456789012345680000}',
  '{"pi":3.14159265358979323846264338327950288}',
  '{"tiny":1e-999,"big":1e308}',
  '{"k":1234567890123456}',
  '{}',
])('%s: nothing is found', (text) => {
  expect(inexactNumber(text)).toBeUndefined();
});

test('no JSON.stringify output is found inexact: it prints each number as it parses back', () => {
  fc.assert(fc.property(fc.jsonValue(), (value) => inexactNumber(JSON.stringify(value)) === undefined), { numRuns: 500 });
  fc.assert(fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => inexactNumber(JSON.stringify({ v: value })) === undefined), { numRuns: 2000 });
});

test('every integer whose double prints otherwise is found', () => {
  fc.assert(
    fc.property(fc.bigInt({ min: 2n ** 53n, max: 2n ** 80n }), fc.boolean(), (n, negative) => {
      const text = (negative ? -n : n).toString();
      const expected = String(Number(text)) === text ? undefined : text;
      return inexactNumber(`{"id":${text}}`) === expected;
    }),
    { numRuns: 2000 },
  );
});
