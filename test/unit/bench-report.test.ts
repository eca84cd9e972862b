// The benchmark report's round-by-round ratios (bench/lib/report.js): the verdicts of the open
// issues are read from them, so their pairing and quartiles are pinned here.
const { roundRatios, spread, verdict } = require('../../bench/lib/report.js');

const rounds = (...perCall: number[]) => ({ rounds: perCall.map((cpu) => ({ seconds: 2, calls: 100, cpuUs: cpu * 100 })) });

describe('bench report: ratios round by round', () => {
  test('pairs round k of a load with round k of its baseline, for CPU per call and for calls/s', () => {
    const row = rounds(120, 300, 110);
    const base = rounds(100, 100, 100, 100);
    expect(roundRatios(row, base)).toEqual([1.2, 3, 1.1].map((x) => expect.closeTo(x, 10)));
    const fast = { rounds: [{ seconds: 1, calls: 300, cpuUs: 1 }] };
    const slow = { rounds: [{ seconds: 2, calls: 200, cpuUs: 1 }] };
    expect(roundRatios(slow, fast, 'rate')).toEqual([expect.closeTo(1 / 3, 10)]);
    expect(roundRatios({}, base)).toEqual([]);
  });

  test('spread gives the median and the quartiles, interpolated, whatever the order', () => {
    expect(spread([5, 1, 3, 2, 4])).toEqual({ median: 3, low: 2, high: 4, n: 5 });
    expect(spread([4, 1, 3, 2])).toEqual({ median: 2.5, low: 1.75, high: 3.25, n: 4 });
    expect(spread([7])).toEqual({ median: 7, low: 7, high: 7, n: 1 });
  });

  test('a verdict stays on the ratio of the totals; the rounds are reported beside it', () => {
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      const v = verdict('x', 1.2, 1.15, [1.0, 1.1, 1.1, 2.5]);
      expect(v).toMatchObject({ ok: false, ratio: 1.2, roundMedian: 1.1, rounds: 4 });
      expect(log.mock.calls[0]![0]).toBe('MISS x: 1.20x (target <= 1.15x); by round: median 1.10x, middle half 1.08-1.45x over 4 rounds');
      expect(verdict('y', 1.1, 1.15)).toEqual({ name: 'y', ratio: 1.1, target: 1.15, ok: true });
    } finally {
      log.mockRestore();
    }
  });
});
