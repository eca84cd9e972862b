import type { ValidateFunction } from 'ajv';
import { Effect, type ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import { TOOL_DEFAULTS } from '../options';

/** A retry policy with every default filled in. */
export interface ResolvedRetry {
  readonly maxAttempts: number;
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
  readonly multiplier: number;
  readonly jitter: number;
}

/** Loop-detection thresholds with every default filled in. */
export interface ResolvedLoopPolicy {
  readonly warn: number;
  readonly stop: number;
  readonly failureWarn: number;
  readonly failureBlock: number;
  /** How long LOOP_BLOCKED lasts after the call's last counted failure (or the wait it told, if longer), in ms. */
  readonly blockCooldownMs: number;
  /** The wait a failure asking to be called again later without saying when is taken to have told, in ms. */
  readonly assumedWaitMs: number;
}

/** A registered tool: its spec, the compiled schema and every policy resolved to a value. */
export interface ResolvedTool {
  readonly name: string;
  /** The owning tenant; empty for tools from the config file, which every tenant sees. */
  readonly tenant: string;
  readonly spec: ToolSpec;
  readonly schema: Record<string, unknown>;
  readonly validate: ValidateFunction;
  readonly readOnly: boolean;
  readonly timeoutMs: number;
  readonly retry: ResolvedRetry;
  readonly keyFields: readonly string[];
  readonly idempotencyTtlSeconds: number;
  readonly maxResultChars: number;
  readonly memoizeTtlSeconds: number;
  readonly loop: ResolvedLoopPolicy;
}

const orDefault = (value: number | undefined, fallback: number): number =>
  value === undefined || value === 0 ? fallback : value;

/** Fills a spec's zero-valued policy fields with their defaults (DESIGN section 11). */
export function resolveTool(
  spec: ToolSpec,
  tenant: string,
  compiled: { schema: Record<string, unknown>; validate: ValidateFunction },
): ResolvedTool {
  const d = TOOL_DEFAULTS;
  return Object.freeze({
    name: spec.name,
    tenant,
    spec,
    schema: compiled.schema,
    validate: compiled.validate,
    readOnly: spec.effect === Effect.READ_ONLY,
    timeoutMs: orDefault(spec.timeoutMs, d.timeoutMs),
    retry: Object.freeze({
      maxAttempts: orDefault(spec.retry?.maxAttempts, d.maxAttempts),
      initialBackoffMs: orDefault(spec.retry?.initialBackoffMs, d.initialBackoffMs),
      maxBackoffMs: orDefault(spec.retry?.maxBackoffMs, d.maxBackoffMs),
      multiplier: orDefault(spec.retry?.backoffMultiplier, d.backoffMultiplier),
      jitter: orDefault(spec.retry?.jitter, d.jitter),
    }),
    keyFields: spec.idempotency?.keyFields ?? [],
    idempotencyTtlSeconds: orDefault(spec.idempotency?.ttlSeconds, d.idempotencyTtlSeconds),
    maxResultChars: orDefault(spec.maxResultChars, d.maxResultChars),
    memoizeTtlSeconds: orDefault(spec.memoizeTtlSeconds, d.memoizeTtlSeconds),
    loop: Object.freeze({
      warn: orDefault(spec.loop?.warnThreshold, d.loopWarn),
      stop: orDefault(spec.loop?.stopThreshold, d.loopStop),
      failureWarn: orDefault(spec.loop?.failureWarnThreshold, d.failureWarn),
      failureBlock: orDefault(spec.loop?.failureBlockThreshold, d.failureBlock),
      blockCooldownMs: orDefault(spec.loop?.blockCooldownMs, d.blockCooldownMs),
      assumedWaitMs: orDefault(spec.loop?.assumedWaitMs, d.assumedWaitMs),
    }),
  });
}
