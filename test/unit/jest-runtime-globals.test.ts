import { slowerThan } from '../helpers/cpu-time';

// scripts/jest-script-runtime.js passes each module the test file's own Math, JSON, Promise... as
// parameters of its wrapper: a global read in jest's vm context goes through the context's
// interceptor, which V8 neither caches nor inlines (jestjs/jest#5163), and CPU-bound code ran
// 3-30x slower than in plain Node (closest-match: 380-470 ms of CPU against 13-38 ms).

// eslint-disable-next-line @typescript-eslint/no-require-imports
const fixture = require('./fixtures/hoisted-globals') as {
  shadowed(): string;
  globals(): { Math: Math; Promise: PromiseConstructor; Array: ArrayConstructor; Buffer: typeof Buffer };
  random(): number;
  isArray(value: unknown): boolean;
  hotLoop(): number;
};

test("a module's globals are the test file's own objects", () => {
  expect(fixture.globals()).toEqual({ Math, Promise, Array, Buffer });
  const { Math: theirs, Promise: theirPromise } = fixture.globals();
  expect(theirs).toBe(Math);
  expect(theirPromise).toBe(Promise);
  expect(fixture.isArray([1])).toBe(true);
});

test('a spy on a global object is seen by the module', () => {
  const spy = jest.spyOn(Math, 'random').mockReturnValue(0.25);
  try {
    expect(fixture.random()).toBe(0.25);
  } finally {
    spy.mockRestore();
  }
});

test('a module declaring a hoisted name itself keeps its own', () => {
  expect(fixture.shadowed()).toBe('a module may declare a hoisted name itself');
});

test('a hot loop over a global runs as in plain Node', () => {
  // ~15-40 ms; read through the context's interceptor, seconds. Past 500 ms, held to 8x the same
  // loop over a local name, which reads no global.
  const min = Math.min;
  const local = (): number => {
    let low = Infinity;
    for (let i = 0; i < 10_000_000; i++) low = min(low, i % 1_000);
    return low;
  };
  expect(slowerThan(() => expect(fixture.hotLoop()).toBe(0), local, 8, 500)).toBeUndefined();
});
