import { create } from '@bufbuild/protobuf';
import { anyPack, DurationSchema, type Any } from '@bufbuild/protobuf/wkt';
import { RetryInfoSchema } from '../../gen/google/rpc/error_details_pb';

/**
 * How long a client should wait before it calls again, by ErrorInfo reason, for the errors that
 * waiting mends (docs/failures.md): sent as a google.rpc.RetryInfo beside the ErrorInfo, so that a
 * client in any language (Go's errdetails, Python's error_details_pb2, Java's RetryInfo) knows
 * when to retry without reading the message. A reason not listed is not mended by waiting alone
 * (a limit the client must stay under, a request to change) and carries none.
 *
 * - OVERLOADED: a bound on what runs at once on the replica; the turns or reads holding it end
 *   within about a second, and a later retry may land on another replica.
 * - STORE_UNAVAILABLE: Redis did not answer within limits.store_timeout_ms (1 s by default); the
 *   store's connection is made again within that.
 * - SHUTTING_DOWN: the replica drains; the call is taken by another one at once, after the
 *   client's channel has seen the GOAWAY and picked another address.
 * - REGISTRY_BUSY: the schema compiler's queue is full (a few seconds of compiling); a compile
 *   budget's refusal names its own wait (the time until the budget has room).
 */
export const RETRY_DELAY_MS: Readonly<Record<string, number>> = {
  OVERLOADED: 1_000,
  STORE_UNAVAILABLE: 1_000,
  SHUTTING_DOWN: 200,
  REGISTRY_BUSY: 2_000,
};

/** The google.rpc.RetryInfo of an error whose client should wait `delayMs` before retrying, packed in an Any. */
export function retryInfo(delayMs: number): Any {
  const ms = Math.max(0, Math.ceil(delayMs));
  const retryDelay = create(DurationSchema, { seconds: BigInt(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1_000_000 });
  return anyPack(RetryInfoSchema, create(RetryInfoSchema, { retryDelay }));
}

/** The wait an error of `reason` asks for: `ownMs` when the error knows it, else its reason's, if any. */
export function retryDelayOf(reason: string | undefined, ownMs?: number): number | undefined {
  return ownMs ?? (reason === undefined ? undefined : RETRY_DELAY_MS[reason]);
}
