import { createToolRates } from '../../src/guards';
import type { RatePolicy } from '../../src/guards/policy-types';
import { createAbortScope } from '../../src/pipeline';

// A replica keeps its own rate limits for at most 10,000 tools (a tenant's tool counts apart from
// another's of the same name). Past it, when every limit was still in use, all were forgotten at
// once: one tenant calling 10,000 distinct tools (11 tenants of 1,000 each, max_tools_per_tenant,
// or one registering and removing tools in turn) let every other tenant's tools burst again.
// Now the tenants holding more than an equal share are cut to it: the flood forgets its own.

const perMinute: RatePolicy = { match: ['*'], perSecond: 1 / 60, burst: 1, waitMs: 0, shared: false, text: '1 call per minute' };
const FAR = Date.now() + 60_000;
const signal = () => createAbortScope().signal;
const tool = (tenant: string, name: string) => ({ tenant, name, timeoutMs: 30_000 });

/** Whether an attempt of the tool starts now ('turn') or is refused ('refused'). */
function attempt(rates: ReturnType<typeof createToolRates>, tenant: string, name: string): string {
  try {
    return rates!.take(tool(tenant, name), signal(), FAR) === undefined ? 'turn' : 'waits';
  } catch {
    return 'refused';
  }
}

test("one tenant's flood of distinct tools forgets its own limits, never another tenant's", () => {
  const rates = createToolRates([perMinute]);
  expect(attempt(rates, 'quiet', 'send')).toBe('turn');
  expect(attempt(rates, '', 'operators')).toBe('turn');
  expect(attempt(rates, 'quiet', 'send')).toBe('refused');
  // Each tool once, every limit then in use for a minute: past the bound.
  for (let i = 0; i < 12_000; i++) expect(attempt(rates, 'flood', `tool_${i}`)).toBe('turn');
  // The other tenants' limits held: still refused until their minute is over.
  expect(attempt(rates, 'quiet', 'send')).toBe('refused');
  expect(attempt(rates, '', 'operators')).toBe('refused');
  // The flood's latest limits held too; its first ones were forgotten (a turn again).
  expect(attempt(rates, 'flood', 'tool_11999')).toBe('refused');
  expect(attempt(rates, 'flood', 'tool_0')).toBe('turn');
});

test('tenants within an equal share keep every limit when others pass the bound together', () => {
  const rates = createToolRates([perMinute]);
  // Ten tenants of 100 tools each (1,000 in all), then two of 6,000: 13,000, past 10,000.
  for (let t = 0; t < 10; t++) for (let i = 0; i < 100; i++) expect(attempt(rates, `small${t}`, `tool_${i}`)).toBe('turn');
  for (let i = 0; i < 6_000; i++) for (const big of ['big0', 'big1']) expect(attempt(rates, big, `tool_${i}`)).toBe('turn');
  for (let t = 0; t < 10; t++) for (let i = 0; i < 100; i++) expect(attempt(rates, `small${t}`, `tool_${i}`)).toBe('refused');
  expect(attempt(rates, 'big0', 'tool_5999')).toBe('refused');
  expect(attempt(rates, 'big1', 'tool_0')).toBe('turn');
});
