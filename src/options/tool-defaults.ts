/** Defaults for every numeric policy field of a ToolSpec; zero in the proto means these. */
export const TOOL_DEFAULTS = Object.freeze({
  timeoutMs: 30_000,
  maxAttempts: 2,
  initialBackoffMs: 250,
  maxBackoffMs: 10_000,
  backoffMultiplier: 2,
  jitter: 0.5,
  maxResultChars: 8_000,
  idempotencyTtlSeconds: 3600,
  memoizeTtlSeconds: 60,
  loopWarn: 3,
  loopStop: 10,
  failureWarn: 2,
  failureBlock: 5,
  /** How long LOOP_BLOCKED lasts after the call's last counted failure, before it may run once more. */
  blockCooldownMs: 30_000,
  /** The wait a failure asking to be called again later without saying when is taken to have told (loop.assumed_wait_ms). */
  assumedWaitMs: 1000,
});

/** The hard ceiling on attempts of one call, whatever the policy says. */
export const MAX_RECOVERY_ATTEMPTS = 5;
