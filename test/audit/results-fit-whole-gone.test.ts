import { createMemoryStore } from '../../src/store';
import { connectRedis, createRedisStore, whenReady } from '../../src/store/redis';
import fc from 'fast-check';
import { boundResult, codePointLength, reboundResult } from '../../src/pipeline';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startDispatch, type TestDispatch } from '../helpers/servers';

// A turn's results are cut to fit max_response_bytes from their whole text, read back from the
// store. When that text is not there (a memory store spill evicted for room by the turn's later
// spills, a Redis spill refused past max_spill_bytes), the cut was made of the bounded text, as if
// it were the whole: its marker counted the first marker's characters as omitted and not the
// characters that marker stood for (the model was told 3,693 omitted of a 6,003-character result
// when 4,696 were), and a result Redis kept no whole text of got a new handle to its bounded text,
// with "read the rest with ReadResult": ReadResult then gave the bounded text, the middle missing.

jest.setTimeout(30_000);

const MARKER = /\n\n\.\.\. \[(\d+) characters omitted by dispatch layer\] \.\.\.\n\n/g;
const shout = async (args: unknown) => {
  const { n, i } = args as { n: number; i: number };
  return `${'😀'.repeat(10)}${String(i).repeat(n)}END`;
};
const yaml = `
limits: { max_response_bytes: 16384, max_calls_per_turn: 32 }
tools:
  - name: shout
    effect: read_only
    skip_memoize: true
    max_result_chars: 5000
    input_schema: '{"type":"object"}'
    builtin: { name: shout }
`;
const turn = (d: TestDispatch, sessionId: string) =>
  d.dispatch.dispatch({ sessionId, calls: Array.from({ length: 8 }, (_, i) => ({ id: `c${i}`, name: 'shout', arguments: JSON.stringify({ n: 6_000, i }) })) }).then((r) => r.results);

/** The one marker of `output`, which counts what it leaves out of the whole of `whole` code points. */
function expectOneTrueMarker(output: string, whole: number): void {
  const markers = [...output.matchAll(MARKER)];
  expect(markers).toHaveLength(1);
  expect(Number(markers[0]![1])).toBe(whole - (codePointLength(output) - codePointLength(markers[0]![0])));
  expect(output.startsWith('😀'.repeat(10))).toBe(true);
  expect(output.endsWith('END')).toBe(true);
}

test('a bounded text bounded again without its whole is what bounding the whole would give', () => {
  const unit = fc.constantFrom('a', 'é', '😀', '\u0301', '\r\n', '\ud800', '7');
  fc.assert(
    fc.property(fc.array(unit, { maxLength: 3_000 }), fc.integer({ min: 60, max: 1_500 }), fc.integer({ min: 0, max: 1_500 }), (units, first, less) => {
      const text = units.join('');
      const bounded = boundResult(text, first).text;
      const again = Math.max(0, first - less);
      expect(reboundResult(bounded, again)).toBe(boundResult(again < first ? text : bounded, again).text);
    }),
    { numRuns: 500 },
  );
});

test('memory store: a result whose spill the turn evicted is cut with a marker counting what the whole text lost', async () => {
  const d = await startDispatch(yaml, { builtins: new Map([['shout', shout]]), store: createMemoryStore({ maxSpilledChars: 10_000 }) });
  try {
    const results = await turn(d, 'evicted');
    for (const result of results) {
      expect([result.isError, result.truncated]).toEqual([false, true]);
      expect(codePointLength(result.output)).toBeLessThan(5_000);
      expectOneTrueMarker(result.output, 6_013);
    }
  } finally {
    await d.close();
  }
});

describe('redis store, spills past max_spill_bytes refused', () => {
  let redis: TestRedis;
  let d: TestDispatch;
  beforeAll(async () => {
    redis = await startRedis({ own: true });
    const client = connectRedis(redis.url);
    if (!(await whenReady(client, 10_000))) throw new Error('redis did not become ready');
    d = await startDispatch(yaml, { builtins: new Map([['shout', shout]]), store: createRedisStore(client, { maxSpillBytes: 5_500 }) });
  });
  afterAll(async () => {
    await d?.close();
    await redis?.close();
  });

  test('a bounded result with no whole text kept is cut with a true marker, and names no handle to its bounded text', async () => {
    const results = await turn(d, 'refused');
    for (const result of results) {
      expect([result.isError, result.truncated, result.resultHandle]).toEqual([false, true, '']);
      expectOneTrueMarker(result.output, 6_013);
      expect(result.warnings).toEqual([
        'the full text of this result (6013 characters) could not be kept, so it cannot be read with ReadResult; only the part shown here is available',
        expect.stringMatching(/^the result was cut to \d+ characters so that the turn's results fit in one response \(max_response_bytes\); the rest could not be kept$/),
      ]);
    }
  });
});
