import { resolveWorkerOptions } from '../../src/executors/worker';

describe('worker options', () => {
  it('fills the defaults', () => {
    expect(resolveWorkerOptions()).toEqual({ heartbeatTimeoutMs: 15_000, sweepIntervalMs: 1_000, maxToolsPerHello: 256, advertiseIntervalMs: 5_000, routeTtlMs: 15_000, relayGraceMs: 1_000, subscriberCountTimeoutMs: 1_000, publishStallMs: 1_000, maxRememberedAssignments: 10_000, probeIntervalMs: 1_000, maxMissedProbes: 2, maxUnsentBytes: 16 * 1024 * 1024 });
  });

  it.each([
    [{ heartbeatTimeoutMs: 0 }, 'worker.heartbeatTimeoutMs must be a positive integer, got 0'],
    [{ sweepIntervalMs: 1.5 }, 'worker.sweepIntervalMs must be a positive integer, got 1.5'],
    [{ advertiseIntervalMs: 5_000, routeTtlMs: 5_000 }, 'worker.routeTtlMs (5000) must be longer than worker.advertiseIntervalMs (5000)'],
  ])('rejects %j', (options, message) => {
    expect(() => resolveWorkerOptions(options)).toThrow(message);
  });
});
