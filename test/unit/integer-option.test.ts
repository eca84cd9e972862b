import { checkInteger } from '../../src/options';

// The option resolvers' messages, word for word, come from this one check.
test('an integer in range is returned as it is', () => {
  expect(checkInteger('n', 1)).toBe(1);
  expect(checkInteger('n', 0, { min: 0 })).toBe(0);
  expect(checkInteger('n', 10, { min: 10, max: 10 })).toBe(10);
});

test.each([
  [() => checkInteger('worker.x', 0, {}, String), 'worker.x must be a positive integer, got 0'],
  [() => checkInteger('n', 1.5), 'n must be a positive integer, got 1.5'],
  [() => checkInteger('n', '5'), 'n must be a positive integer, got "5"'],
  [() => checkInteger('n', '5', {}, String), 'n must be a positive integer, got 5'],
  [() => checkInteger('n', NaN), 'n must be a positive integer, got NaN'],
  [() => checkInteger('n', -Infinity), 'n must be a positive integer, got -Infinity'],
  [() => checkInteger('n', NaN, {}, String), 'n must be a positive integer, got NaN'],
  [() => checkInteger('n', undefined), 'n must be a positive integer, got undefined'],
  [() => checkInteger('n', -1, { min: 0 }), 'n must be a non-negative integer, got -1'],
  [() => checkInteger('n', 11, { min: 1, max: 10 }), 'n must be an integer from 1 to 10, got 11'],
  [() => checkInteger('n', 1, { min: 2 }), 'n must be an integer from 2 to Infinity, got 1'],
])('a value out of range is a RangeError naming the option: %#', (check, message) => {
  expect(check).toThrow(new RangeError(message));
});
