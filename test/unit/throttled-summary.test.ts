import { throttledWarn } from '../../src/log/throttled';

// An SRE's probe: an 8 s Redis outage failed 32 calls and logged one "store unavailable" line; the
// 31 held back were told ("notLoggedBefore": 31) on the next such line, 10 minutes later, about
// another incident. The interval's end now says what it held back, with the last one's fields.

afterEach(() => jest.useRealTimers());

test("what an interval held back is said at its end, once, and the key's next line starts afresh", () => {
  jest.useFakeTimers({ now: 1_000_000 });
  const logged: [string, Record<string, unknown> | undefined][] = [];
  const noop = () => undefined;
  const warn = throttledWarn({ debug: noop, info: noop, error: noop, warn: (message, fields) => void logged.push([message, fields]) }, 10_000);
  warn('store unavailable', { tool: 'a' });
  jest.advanceTimersByTime(2_000);
  for (let i = 0; i < 30; i++) warn('store unavailable', { tool: 'a' });
  warn('store unavailable', { tool: 'b' });
  expect(logged).toHaveLength(1);
  jest.advanceTimersByTime(7_999);
  expect(logged).toHaveLength(1);
  jest.advanceTimersByTime(1);
  expect(logged).toEqual([
    ['store unavailable', { tool: 'a' }],
    ['store unavailable', { tool: 'b', repeated: 31, withinMs: 10_000 }],
  ]);
  // Ten minutes later, another incident: no count of the first.
  jest.advanceTimersByTime(600_000);
  warn('store unavailable', { tool: 'c' });
  expect(logged.at(-1)).toEqual(['store unavailable', { tool: 'c' }]);
  jest.advanceTimersByTime(20_000);
  expect(logged).toHaveLength(3);
});
