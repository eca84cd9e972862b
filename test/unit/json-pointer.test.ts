import { readPointer } from '../../src/json';

// RFC 6901: in an array a reference token is an index, "0" or a digit 1-9 followed by digits,
// below the array's length; "-" (past the last element) names no value. `length` on an array
// resolved to its length (hasOwnProperty), and an idempotency key built on it matched other calls.

const doc = { to: ['a@x', 'b@x'], length: 7, 'a/b': 1, 'm~n': 2, nested: [{ k: 'v' }], '': 3 };

test.each([
  ['', doc],
  ['/to', doc.to],
  ['/to/0', 'a@x'],
  ['/to/1', 'b@x'],
  ['/length', 7],
  ['/a~1b', 1],
  ['/m~0n', 2],
  ['/nested/0/k', 'v'],
  ['/', 3],
])('%j resolves', (pointer, value) => {
  expect(readPointer(doc, pointer)).toEqual(value);
});

test.each(['/to/length', '/to/2', '/to/-', '/to/01', '/to/-1', '/to/+1', '/to/1.0', '/to/ 1', '/to/1e0', '/to/0x1', '/to/constructor', '/to/__proto__', '/nested/length/k', '/missing', '/length/0', '/to/0/length', 'to'])(
  '%j resolves to nothing',
  (pointer) => {
    expect(readPointer(doc, pointer)).toBeUndefined();
  },
);

test('an object keyed by digits is read by its keys, not as an array', () => {
  expect(readPointer({ '01': 'a', '-': 'b', length: 'c' }, '/01')).toBe('a');
  expect(readPointer({ '01': 'a', '-': 'b', length: 'c' }, '/-')).toBe('b');
  expect(readPointer({ '01': 'a', '-': 'b', length: 'c' }, '/length')).toBe('c');
});
