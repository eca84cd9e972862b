import { ErrorKind, type ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { kindName } from '../errors';
import type { AttemptOutcome } from '../pipeline';
import { OUTCOME_OK } from './span-attributes';

/** What one finished call amounts to, for metrics and GetToolStats. */
export interface CallSummary {
  readonly tenant: string;
  /** The tool the model asked for. */
  readonly tool: string;
  /** False when the name matched no tool (UNKNOWN_TOOL, or not offered). */
  readonly known: boolean;
  /** `ok`, the error kind's short name (`TIMEOUT`), or a hard error's reason (`LOOP_DETECTED`). */
  readonly outcome: string;
  /**
   * Attempts begun, as `ToolResult.attempts` counts them: runs of the per-attempt pipeline (DESIGN
   * section 3, each a TOOL_PRE event and an attempt span), whether or not the executor ran, so a
   * replay, a memo hit and an attempt the loop pre-check stopped count 1 each; a retry or a
   * fallback adds one. 0 for a call that never began one.
   */
  readonly attempts: number;
  readonly durationMs: number;
  readonly validationFailed: boolean;
  /** Some attempt timed out. */
  readonly timedOut: boolean;
  /** The call was retried at least once. */
  readonly retried: boolean;
  /**
   * Answered from an idempotency record instead of running: a replay of the stored result, or
   * IN_PROGRESS / OUTCOME_UNKNOWN for an identical call still running or cut off (the model
   * re-calling a side-effecting tool with identical arguments, the seed's idempotent hit).
   */
  readonly idempotentHit: boolean;
  /** The result was cut by the dispatch layer (not a replay of a result cut before). */
  readonly bounded: boolean;
  /** Some attempt ended UNEXPECTED (the tool crashed or broke its contract), not as a replay of such an error. */
  readonly unexpected: boolean;
}

/** Receives every finished call; must not throw or wait. */
export type CallSink = (summary: CallSummary) => void;

/**
 * Receives every attempt as it ends: the tenant, the tool the attempt ran (a fallback's own name),
 * its outcome (`ok`, the error kind's short name, or the hard error that cut it off:
 * `LOOP_DETECTED`, `CANCELLED`, ...), whether it was a retry (an attempt after the call's first)
 * and how long its executor ran in ms, undefined when it ran no tool (refused before it, replayed
 * from an idempotency record, or served from the memo cache). Positional, so that an attempt
 * allocates nothing for it; must not throw or wait.
 */
export type AttemptSink = (tenant: string, tool: string, outcome: string, retry: boolean, ranMs: number | undefined) => void;

/** Tells `sink` of an attempt that ended with `outcome` (or `errorType`, the hard error that left it open). */
export function reportAttempt(sink: AttemptSink | undefined, tenant: string, tool: string, attempt: number, errorType: string | undefined, outcome: AttemptOutcome | undefined): void {
  if (sink === undefined) return;
  sink(tenant, tool, errorType ?? OUTCOME_OK, attempt > 1, outcome === undefined || outcome.cached || outcome.replay ? undefined : outcome.ranMs);
}

/** What a call observer saw across its attempts, besides the result. */
export interface CallFlags {
  readonly attempts: number;
  readonly retried: boolean;
  readonly timedOut: boolean;
  /** Some attempt that was no replay ended UNEXPECTED. */
  readonly unexpected: boolean;
  readonly replayed: boolean;
}

/** The error type of a finished call: its result's error kind, a hard error, or undefined for ok. */
export function callErrorType(result: ToolResult | undefined, hardError: string | undefined): string | undefined {
  if (!result) return hardError ?? 'INTERNAL';
  return result.isError ? kindName(result.error?.kind ?? ErrorKind.UNSPECIFIED) : undefined;
}

/** Whether a tool is registered for a tenant: its effect, or '' when none is (ObserverEnv.effectOf). */
export interface ToolLookup {
  effectOf(tenant: string, tool: string): string;
}

/**
 * A call's own duration in ms: what its observer measured, at most its result's duration_ms (the
 * pipeline's measure of the call alone, in whole ms) and the half millisecond rounding may have
 * taken off. A parallel turn starts every call's observer before its first wave and ends each when
 * the call's wave is over: a 3 ms call beside a 600 ms one, or in the wave after it, measured 0.6 s.
 */
const ownDuration = (result: ToolResult | undefined, measured: number): number => (result === undefined ? measured : Math.min(measured, result.durationMs + 0.5));

/** The summary of a finished call, from its result (or hard error) and what its observer saw. */
export function summarizeCall(tenant: string, tool: string, result: ToolResult | undefined, hardError: string | undefined, flags: CallFlags, durationMs: number, tools: ToolLookup): CallSummary {
  const kind = result?.isError ? (result.error?.kind ?? ErrorKind.UNSPECIFIED) : undefined;
  // A replay ran no tool and cut nothing: the first call's crash or cut result it repeats is not
  // counted again (the rates diagnose tools), and the re-call is an idempotent hit.
  const replay = result?.idempotentReplay ?? flags.replayed;
  return {
    tenant,
    tool,
    // A call that ended before it ran (a parallel turn cancelled or failed first) may name any
    // tool a model made up: it counts as a tool only if one by that name is registered.
    known: kind !== ErrorKind.UNKNOWN_TOOL && (result !== undefined || flags.attempts > 0 || tools.effectOf(tenant, tool) !== ''),
    outcome: callErrorType(result, hardError) ?? OUTCOME_OK,
    attempts: result?.attempts ?? flags.attempts,
    durationMs: ownDuration(result, durationMs),
    validationFailed: kind === ErrorKind.INVALID_ARGUMENTS,
    timedOut: flags.timedOut,
    retried: flags.retried,
    idempotentHit: replay || kind === ErrorKind.IN_PROGRESS || kind === ErrorKind.OUTCOME_UNKNOWN,
    bounded: (result?.truncated ?? false) && !replay,
    unexpected: flags.unexpected || (kind === ErrorKind.UNEXPECTED && !replay),
  };
}
