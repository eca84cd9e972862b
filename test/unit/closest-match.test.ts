import { closestMatch } from '../../src/json';
import { slowerThan } from '../helpers/cpu-time';

// "Did you mean" for a made-up tool name: the closest registered name, when close enough; and
// bounded work whatever the name's length (found in review: a 100 KB name against 200 tools took
// 3.7 s of CPU, an unbounded edit distance per tool; a turn may carry 128 such names).

const names = Array.from({ length: 200 }, (_, i) => `tool_number_${i}_search`);

test.each<[string, readonly string[], string | undefined]>([
  ['get_wether', ['get_weather', 'send_email'], 'get_weather'],
  ['GET_WEATHER', ['get_weather', 'send_email'], 'get_weather'],
  ['zzz', ['get_weather'], undefined],
  ['tool_numbr_7_search', names, 'tool_number_7_search'],
  ['', ['a'], undefined],
])('%s among %j: %s', (name, candidates, expected) => {
  expect(closestMatch(name, candidates)).toBe(expected);
});

test('a name of 100 KB against 200 tools is answered at once', () => {
  // CPU time, not wall time: three jest workers share two cores with servers of other suites.
  // Past 200 ms, held to 8x a name of 1 KB (the same work now; a hundredth of it before).
  const match = (length: number): void => {
    expect(closestMatch('x'.repeat(length), names)).toBeUndefined();
    expect(closestMatch(`tool_number_7_search${'y'.repeat(40)}`, names)).toBeUndefined();
  };
  expect(slowerThan(() => match(100_000), () => match(1_000), 8, 200)).toBeUndefined();
});

test('a name of 128 characters against 10,000 candidates of 128 is bounded in work, the first candidates looked at', () => {
  // Each took 0.9-1.4 s before (a turn holds 128 calls, each of a name not offered): the
  // comparisons stop once MAX_MATCH_WORK character pairs are spent.
  const many = ['echo', ...Array.from({ length: 9_999 }, (_, i) => String(i).padEnd(128, 'z'))];
  // 13-38 ms of CPU in plain Node, 18-62 ms here; 380-470 ms before the test runtime passed modules
  // their globals (scripts/jest-script-runtime.js: `Math.min` read through jest's vm context). The
  // 17 calls unbounded took 15-24 s.
  // Past 2 s, held to 8x the first 100 candidates (the same work now; a hundredth of it before).
  const match = (candidates: readonly string[]): void => {
    for (let i = 0; i < 16; i++) closestMatch('q'.repeat(128), candidates);
    expect(closestMatch(`1${'z'.repeat(126)}y`, candidates)).toBe(`1${'z'.repeat(127)}`);
  };
  expect(slowerThan(() => match(many), () => match(many.slice(0, 100)), 8, 2_000)).toBeUndefined();
});
