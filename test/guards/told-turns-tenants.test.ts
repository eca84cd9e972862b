import type { DispatchError } from '../../src/errors';
import { createToolRates } from '../../src/guards';
import type { RatePolicy } from '../../src/guards/policy-types';
import { createAbortScope } from '../../src/pipeline';

// Calls a replica's own rate limit refuses are told successive turns (told-turns.ts), from the
// last time told per tool, kept for 10,000 tools. Past it, when every time told was still ahead,
// all were forgotten at once: one tenant's refusals over 10,000 of its tools (11 tenants of 1,000,
// as for the limits themselves in rate-limit-tenants.test.ts) made every other tenant's next
// refused call be told the very turn an earlier one was told, and one of the two refused again.

const perMinute: RatePolicy = { match: ['*'], perSecond: 1 / 60, burst: 1, waitMs: 0, shared: false, text: '1 call per minute' };
const FAR = Date.now() + 60_000;
const tool = (tenant: string, name: string) => ({ tenant, name, timeoutMs: 30_000 });

/** When a refused attempt is told to come back (now plus its retry_after_ms); throws if it is not refused. */
function told(rates: ReturnType<typeof createToolRates>, tenant: string, name: string): number {
  try {
    rates!.take(tool(tenant, name), createAbortScope().signal, FAR);
  } catch (error) {
    return performance.now() + (error as DispatchError).retryAfterMs!;
  }
  throw new Error(`${tenant}/${name} was not refused`);
}

test("one tenant's refusals over many tools never make another tenant's refused calls be told the same turn", () => {
  const rates = createToolRates([perMinute]);
  expect(rates!.take(tool('quiet', 'send'), createAbortScope().signal, FAR)).toBeUndefined();
  const first = told(rates, 'quiet', 'send');
  const second = told(rates, 'quiet', 'send');
  expect(second - first).toBeGreaterThanOrEqual(59_000);
  // Each of 12,000 tools once, then refused once: a time told ahead for every one of them.
  for (let i = 0; i < 12_000; i++) {
    expect(rates!.take(tool('flood', `tool_${i}`), createAbortScope().signal, FAR)).toBeUndefined();
    told(rates, 'flood', `tool_${i}`);
  }
  // The next call of the quiet tenant refused is told a minute after the second one, not the
  // first one's turn again.
  expect(told(rates, 'quiet', 'send') - second).toBeGreaterThanOrEqual(59_000);
});
