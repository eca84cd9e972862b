import * as grpc from '@grpc/grpc-js';
import { DispatchMode } from '../../gen/dispatch/v1/dispatch_pb';
import { resolveLimits } from '../../src/options';
import { failure } from '../contract/error-info';
import { startDispatch, type TestDispatch } from '../helpers/servers';

// The memory store's budget for results' whole texts (what ReadResult reads) had no config key:
// ReadResult of a handle evicted for room could only say that none sets it. limits.max_spilled_chars
// sets it; 0, its default, leaves the store's own (32 Mi characters, scaled to the heap).

let d: TestDispatch;
beforeAll(async () => {
  d = await startDispatch(`limits: { max_spilled_chars: 5000 }
tools:
  - name: big
    effect: read_only
    skip_memoize: true
    concurrency_safe: true
    max_result_chars: 100
    builtin: { name: echo }
`);
});
afterAll(() => d?.close());

test('limits.max_spilled_chars bounds the texts kept for ReadResult, and an evicted handle names it', async () => {
  const calls = Array.from({ length: 6 }, (_, i) => ({ id: `c${i}`, name: 'big', arguments: JSON.stringify({ i, pad: ''.padEnd(1_500, '.') }) }));
  const { results } = await d.dispatch.dispatch({ sessionId: 's', mode: DispatchMode.PARALLEL, calls });
  const answers = await Promise.all(results.map((r) => failure(d.dispatch.readResult({ resultHandle: r.resultHandle, offset: 0, limit: 5 })).catch(() => undefined)));
  const evicted = answers.filter((a) => a !== undefined);
  // 6 x ~1,530 characters past 5,000: at least 3 are gone (with the default budget, none would be).
  expect(evicted.length).toBeGreaterThanOrEqual(3);
  for (const a of evicted) {
    expect(a!.code).toBe(grpc.status.NOT_FOUND);
    expect(a!.reason).toBe('RESULT_EVICTED');
    expect(a!.details).toContain('under their budget of 5000 characters');
    expect(a!.details).toContain('raise limits.max_spilled_chars');
  }
});

test('limits.max_spilled_chars is 0 by default (the store decides), and refuses what is not a whole number of 0 or more', () => {
  expect(resolveLimits({}).maxSpilledChars).toBe(0);
  expect(resolveLimits({ maxSpilledChars: 0 }).maxSpilledChars).toBe(0);
  expect(() => resolveLimits({ maxSpilledChars: -1 })).toThrow(/maxSpilledChars/);
  expect(() => resolveLimits({ maxSpilledChars: 1.5 })).toThrow(/maxSpilledChars/);
});
