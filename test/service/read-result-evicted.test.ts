import * as grpc from '@grpc/grpc-js';
import { DispatchMode } from '../../gen/dispatch/v1/dispatch_pb';
import { createMemoryStore } from '../../src/store';
import { failure } from '../contract/error-info';
import { startDispatch, type TestDispatch } from '../helpers/servers';

// In one turn of 6 parallel large results, 5 handles answered ReadResult NOT_FOUND at once: the
// memory store keeps spills under a budget across sessions (maxSpilledChars, 32 Mi characters,
// about two full-size results), and the answer was "not found (it may have expired)", reason
// RESULT_NOT_FOUND. A handle evicted for room is now told so: NOT_FOUND still, reason
// RESULT_EVICTED, naming the budget and what raises it.

const BUDGET = 5_000;
let d: TestDispatch;
beforeAll(async () => {
  d = await startDispatch(
    `tools:
  - name: big
    effect: read_only
    skip_memoize: true
    concurrency_safe: true
    max_result_chars: 100
    builtin: { name: echo }
`,
    { store: createMemoryStore({ maxSpilledChars: BUDGET, maxEvictedHandles: 4 }) },
  );
});
afterAll(() => d?.close());

/** A turn of `n` parallel calls of `session`, each spilling about 1,530 characters; their handles. */
async function bigTurn(session: string, n: number): Promise<string[]> {
  const calls = Array.from({ length: n }, (_, i) => ({ id: `c${i}`, name: 'big', arguments: JSON.stringify({ i, pad: `${session}${i}`.padEnd(1_500, '.') }) }));
  const { results } = await d.dispatch.dispatch({ sessionId: session, mode: DispatchMode.PARALLEL, calls });
  const handles = results.map((r) => r.resultHandle);
  expect(handles.every((h) => h !== '')).toBe(true);
  return handles;
}

/** How ReadResult answers each handle: 'ok', or the ErrorInfo reason of its NOT_FOUND, with its message. */
const readEach = (handles: string[]) =>
  Promise.all(
    handles.map((resultHandle) =>
      d.dispatch.readResult({ resultHandle, offset: 0, limit: 5 }).then(
        () => ({ handle: resultHandle, reason: 'ok', details: '' }),
        async (error: unknown) => {
          const info = await failure(Promise.reject(error));
          expect(info.code).toBe(grpc.status.NOT_FOUND);
          return { handle: resultHandle, reason: info.reason, details: info.details, metadata: info.metadata };
        },
      ),
    ),
  );

test('ReadResult of a handle evicted for room is NOT_FOUND, reason RESULT_EVICTED, naming the budget and its setting', async () => {
  const read = await readEach(await bigTurn('a', 6));
  // 6 x ~1,530 characters past a budget of 5,000: at most 3 are kept, at least the newest 2.
  const kept = read.filter((r) => r.reason === 'ok');
  const evicted = read.filter((r) => r.reason !== 'ok');
  expect(kept.length).toBeGreaterThanOrEqual(2);
  expect(evicted.length).toBeGreaterThanOrEqual(3);
  expect(evicted.length).toBeLessThanOrEqual(4);
  for (const r of evicted) {
    expect(r).toMatchObject({ reason: 'RESULT_EVICTED', metadata: { max_spilled_chars: String(BUDGET) } });
    expect(r.details).toBe(
      `result handle "${r.handle}" not found: its result was evicted to keep this replica's stored results under their budget of ${BUDGET} characters (newer results took its room before it expired); raise limits.max_spilled_chars (the memory store option maxSpilledChars) to keep more, or read results sooner`,
    );
  }
  // A handle never issued is still RESULT_NOT_FOUND, "it may have expired".
  const unknown = await failure(d.dispatch.readResult({ resultHandle: `${evicted[0]!.handle.slice(0, -4)}AAAA` }));
  expect(unknown).toMatchObject({ code: grpc.status.NOT_FOUND, reason: 'RESULT_NOT_FOUND' });
  expect(unknown.details).toMatch(/not found \(it may have expired\)$/);
});

test('only maxEvictedHandles evictions are remembered: older evicted handles fall back to RESULT_NOT_FOUND', async () => {
  const older = await bigTurn('b', 6);
  const newer = await bigTurn('c', 6);
  const read = await readEach([...older, ...newer]);
  const count = (reason: string) => read.filter((r) => r.reason === reason).length;
  // Of 12 spills at most 3 are kept; 9 or more were evicted, and only the 4 latest evictions are told so.
  expect(count('ok')).toBeGreaterThanOrEqual(2);
  expect(count('ok')).toBeLessThanOrEqual(3);
  expect(count('RESULT_EVICTED')).toBe(4);
  expect(count('RESULT_NOT_FOUND')).toBe(12 - count('ok') - 4);
  // Those told are the latest evicted: none of b's comes after one of c's not told.
  expect(read.slice(0, 6).every((r) => r.reason !== 'ok')).toBe(true);
});
