import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { maxInFlight, type TestDispatch, type ToolServer } from '../helpers/servers';
import { until } from './helpers';
import { callAs, callsOf } from './two-tenants';

// The checks of a cap `{ max_in_flight: 3, max_in_flight_per_tenant: 2 }` on tool `capped` and
// `{ max_in_flight: 2, max_in_flight_per_tenant: 1, wait_ms: 5000 }` on tool `queued` (tools that
// take 400 and 250 ms), made on one replica or two sharing Redis: the calls go to `apps` in turn.

/** The shared caps these checks expect, as `policies:` entries: `capped` and `queued`, shared through Redis. */
export const SHARED_SHARE_POLICIES = `  - match: capped
    concurrency: { max_in_flight: 3, max_in_flight_per_tenant: 2, shared: true }
  - match: queued
    concurrency: { max_in_flight: 2, max_in_flight_per_tenant: 1, wait_ms: 5000, shared: true }
`;

/** acme's burst of 4 takes its share (2); of globex's 2 calls, one runs, one finds the tool's total (3) taken. */
export async function expectBurstKeptToShare(apps: readonly TestDispatch[], tools: ToolServer, where: string): Promise<void> {
  const on = (i: number) => apps[i % apps.length]!;
  const burst = Promise.all([0, 1, 2, 3].map((i) => callAs(on(i), 'acme', 'capped')));
  await until(() => tools.count('/capped') === 2);
  const theirs = await Promise.all([callAs(on(1), 'globex', 'capped'), callAs(on(0), 'globex', 'capped')]);
  const mine = await burst;

  // acme: two run, two refused for its share, which the message names (not the tool's limit).
  expect(mine.filter((r) => !r.isError)).toHaveLength(2);
  for (const r of mine.filter((x) => x.isError)) {
    expect(r.error?.kind).toBe(ErrorKind.UNAVAILABLE);
    expect(r.error?.message).toBe(`tool "capped" is at this tenant's share of 2 calls running at once ${where} (max_in_flight_per_tenant; its limit for all tenants together is 3); this call was not executed`);
    expect(r.error?.retryAfterMs).toBe(1000);
  }
  // globex: one runs (before, all of globex's calls were refused), the next finds the tool's total taken.
  expect(theirs.filter((r) => !r.isError)).toHaveLength(1);
  expect(theirs.find((r) => r.isError)?.error?.message).toBe(`tool "capped" is at its limit of 3 calls running at once ${where}; this call was not executed`);
  expect(callsOf(tools.received, 'globex', '/capped')).toHaveLength(1);
  expect(maxInFlight(tools.received)).toBe(3);
}

/** acme's 3 calls wait for its share (1) one after another; globex's call runs at once beside them, not behind them. */
export async function expectWaitersKeptToShare(apps: readonly TestDispatch[], tools: ToolServer): Promise<void> {
  const on = (i: number) => apps[i % apps.length]!;
  const burst = Promise.all([0, 1, 2].map((i) => callAs(on(i), 'acme', 'queued')));
  await until(() => tools.count('/queued') === 1);
  const asked = Date.now();
  expect((await callAs(on(1), 'globex', 'queued')).isError).toBe(false);
  const [own] = callsOf(tools.received, 'globex', '/queued');
  // At once, beside acme's first call, not after acme's two waiting ones (250 ms each).
  expect(own!.start - asked).toBeLessThan(200);
  expect((await burst).map((r) => r.error?.message ?? 'ok')).toEqual(['ok', 'ok', 'ok']);
  // acme's three ran one at a time (its share), and never more than two ran at once in all.
  expect(maxInFlight(callsOf(tools.received, 'acme', '/queued'))).toBe(1);
  expect(maxInFlight(tools.received)).toBe(2);
}
