import { boundFromEnds, boundResult, reboundResult } from '../../src/pipeline/bound-result';
import { retainedHeap } from '../helpers/heap';

// A hostile tenant's probe: a turn of 32 calls of a tool answering 16 MB each ran dispatchd (a
// 332 MB heap, the chart's default pod) out of memory, every tenant's calls with it, though each
// output was cut to 8,000 characters: the cut was slices of the whole answer, and V8 keeps a
// sliced string's parent alive, so the turn held every answer whole until it ended. The cut is
// now a string of its own.

const MB = 1_000_000;

/** Outputs bounded from 8 answers of 8 MB each, in a function of its own: none of its locals is alive once it returns. */
function outputs(): string[] {
  const kept: string[] = [];
  for (let i = 0; i < 8; i++) {
    const whole = String.fromCharCode(97 + i).repeat(8 * MB) + 'é';
    kept.push(boundResult(whole, 8_000).text);
    kept.push(reboundResult(`${whole.slice(0, 2 * MB)}x`, 4_000));
    kept.push(boundFromEnds(whole.slice(0, 100_000) + whole.slice(-100_000), 8_000, 8 * MB + 1));
  }
  return kept;
}

test('a bounded output keeps none of the text it was cut from alive', () => {
  const before = retainedHeap();
  const kept = outputs();
  const grown = retainedHeap() - before;
  // 24 outputs of at most 8,000 characters (two bytes each, at most); before, 8 answers of 8 MB and more.
  expect(grown).toBeLessThan(4 * MB);
  // The same text as before: head, marker, tail, 8,000 code points in all.
  expect(kept[0]).toMatch(/^a+\n\n\.\.\. \[\d+ characters omitted by dispatch layer\] \.\.\.\n\na+é$/);
  expect([...kept[0]!]).toHaveLength(8_000);
});
