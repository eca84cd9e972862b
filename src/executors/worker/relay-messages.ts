import { ErrorKind } from '../../../gen/dispatch/v1/dispatch_pb';
import { DispatchError, type FailurePhase } from '../../errors';
import { MAX_TIMER_MS } from '../../options/limits';
import type { AssignmentRequest } from './worker-pool';

/**
 * A failure carried between replicas. The fields after `suggestion` are absent from older
 * replicas (and when unset): without them a relayed failure lost its wait (retry_after_ms) and what
 * the breaker reads of it (no host of the tool, dispatch's own trouble).
 */
export interface WireError {
  readonly kind: ErrorKind;
  readonly phase: FailurePhase;
  readonly message: string;
  readonly recoverable: boolean;
  readonly suggestion?: string;
  readonly retryAfterMs?: number;
  readonly httpStatus?: number;
  readonly notRetriedWithinTurn?: boolean;
  readonly notTheTool?: boolean;
  readonly noHost?: boolean;
}

/** What replicas tell each other about assignments, on each replica's own channel. */
export type RelayMessage =
  | { readonly t: 'assign'; readonly id: string; readonly from: string; readonly request: AssignmentRequest }
  /** `deadline`: the assignment's (epoch ms), so that one arriving after its cancel is refused until then; absent from older replicas. */
  | { readonly t: 'cancel'; readonly id: string; readonly deadline?: number }
  | { readonly t: 'reply'; readonly id: string; readonly output?: string; readonly error?: WireError };

/** A failure in its wire form; anything that is not a DispatchError is UNEXPECTED, during. */
export function toWire(error: unknown): WireError {
  const e = DispatchError.from(error, 'during');
  return { kind: e.kind, message: e.message, ...e.fields() };
}

/** A whole number from `min` to `max` from another replica, or undefined. */
const wholeIn = (value: unknown, min: number, max: number): number | undefined => (Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max ? (value as number) : undefined);

/** The DispatchError a wire failure stands for. */
export function fromWire(wire: WireError): DispatchError {
  const kind = ErrorKind[wire.kind] === undefined ? ErrorKind.UNEXPECTED : wire.kind;
  const phase: FailurePhase = wire.phase === 'before' || wire.phase === 'after' ? wire.phase : 'during';
  return new DispatchError(kind, String(wire.message), {
    phase,
    recoverable: wire.recoverable === true,
    suggestion: typeof wire.suggestion === 'string' ? wire.suggestion : undefined,
    retryAfterMs: wholeIn(wire.retryAfterMs, 0, MAX_TIMER_MS),
    httpStatus: wholeIn(wire.httpStatus, 100, 599),
    notRetriedWithinTurn: wire.notRetriedWithinTurn === true,
    notTheTool: wire.notTheTool === true,
    noHost: wire.noHost === true,
  });
}

/** Parses a relay message, or undefined when the text is not one. */
export function parseRelayMessage(text: string): RelayMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const m = value as { t?: unknown; id?: unknown; from?: unknown; request?: unknown };
  if (typeof m.id !== 'string') return undefined;
  if (m.t === 'assign') return typeof m.from === 'string' && typeof m.request === 'object' && m.request !== null ? (value as RelayMessage) : undefined;
  return m.t === 'cancel' || m.t === 'reply' ? (value as RelayMessage) : undefined;
}
