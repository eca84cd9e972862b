import fc from 'fast-check';
import { streakOf, type WindowEntry } from '../../src/store/loop-window';
import { StreakIndex } from '../../src/store/streak-index';

// StreakIndex keeps, per window entry, its op's state and flags instead of the entry: its streaks
// must stay exactly those of streakOf over the newest `window` entries (ages, waits, runs, retries).
describe('StreakIndex', () => {
  const entry = fc.record({
    op: fc.constantFrom('a', 'b', 'c'),
    hash: fc.constantFrom('h1', 'h2'),
    failed: fc.boolean(),
    counts: fc.constantFrom(true, true, false),
    at: fc.integer({ min: 0, max: 100 }),
    until: fc.constantFrom(0, 0, 50, 150),
    retry: fc.constantFrom(false, false, true),
  });

  test('every sequence of records yields the streaks of streakOf, at any time', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.array(entry, { maxLength: 24 }), fc.integer({ min: 0, max: 200 }), (window, entries, now) => {
        const index = new StreakIndex();
        let model: WindowEntry[] = [];
        for (const e of entries) {
          index.add(e.op, e.hash, e.failed, e.counts, e.at, e.until, e.retry, window);
          model = [...model, e].slice(-window);
          expect(index.size).toBe(model.length);
          for (const op of ['a', 'b', 'c']) expect(index.streak(op, now)).toEqual(streakOf(model, op, now));
        }
      }),
      { numRuns: 300 },
    );
  });

  test('a long run of records (its window compacted as it goes) keeps the streaks of streakOf', () => {
    const index = new StreakIndex();
    const model: WindowEntry[] = [];
    const window = 7;
    for (let i = 0; i < 5000; i++) {
      const e = { op: `op${i % 11}`, hash: i % 13 === 0 ? 'x' : 'y', failed: i % 3 === 0, counts: i % 5 !== 0, at: i, until: i % 4 === 0 ? i + 10 : 0, retry: i % 7 === 0 };
      index.record(e, window);
      model.push(e);
      if (i % 97 === 0 || i > 4990) {
        const last = model.slice(-window);
        for (let op = 0; op < 11; op++) expect(index.streak(`op${op}`, i)).toEqual(streakOf(last, `op${op}`, i));
      }
    }
    expect(index.size).toBe(window);
  });
});
