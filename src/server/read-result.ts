import { create } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { ReadResultResponseSchema, type ReadResultRequest, type ReadResultResponse } from '../../gen/dispatch/v1/dispatch_pb';
import { checkInteger } from '../options';
import { terminalText } from '../events/terminal-text';
import { codePointLength, shortened, type PipelineDeps } from '../pipeline';
import { SLACK_BYTES } from './fit-response';
import { invalidArgument, RpcError } from './grpc-adapter';
import { concurrentCalls } from './concurrent-calls';
import type { Authenticator } from './principal';
import type { Store } from '../store';

/** A page's code points when the request names no limit (DESIGN section 11). */
export const READ_DEFAULT = 8_000;
/** The most code points a page holds (DESIGN section 11). */
export const READ_MAX = 65_536;

/** Bounds on the ReadResult RPCs one replica runs at once. */
export interface ReadResultBounds {
  /** ReadResults running at once on this replica, all tenants together. @default 64 */
  readonly maxReadsInFlight?: number;
  /** ReadResults running at once on this replica for one tenant. @default 16 */
  readonly maxReadsPerTenant?: number;
}

export const DEFAULT_READ_BOUNDS: Required<ReadResultBounds> = Object.freeze({ maxReadsInFlight: 64, maxReadsPerTenant: 16 });

/** Fills unset read bounds with their defaults; rejects bad values. */
export function resolveReadBounds(partial: ReadResultBounds = {}): Required<ReadResultBounds> {
  return {
    maxReadsInFlight: checkInteger('maxReadsInFlight', partial.maxReadsInFlight ?? DEFAULT_READ_BOUNDS.maxReadsInFlight),
    maxReadsPerTenant: checkInteger('maxReadsPerTenant', partial.maxReadsPerTenant ?? DEFAULT_READ_BOUNDS.maxReadsPerTenant),
  };
}

/** What the ReadResult handler needs. */
export interface ReadResultOptions {
  readonly deps: PipelineDeps;
  readonly authenticate: Authenticator;
  readonly bounds?: ReadResultBounds;
  /** No authentication is configured: the per-tenant bound defaults to the whole one. */
  readonly singleTenant?: boolean;
}

/**
 * The ReadResult handler: one page of a spilled result, read from the store at a cost of about
 * the page (the store keeps a spill in chunks). The reads running at once are bounded per tenant
 * and in all, so that one tenant's flood of reads cannot take the store's time from every call: a
 * read past a bound is refused at once with RESOURCE_EXHAUSTED (reason OVERLOADED), recoverable by
 * trying again shortly.
 */
export function readResultHandler(options: ReadResultOptions) {
  const { deps, authenticate } = options;
  // Without authentication every caller is tenant `default`, the only tenant: it may take every place.
  const bounds = resolveReadBounds(options.singleTenant ? { maxReadsPerTenant: options.bounds?.maxReadsInFlight ?? DEFAULT_READ_BOUNDS.maxReadsInFlight, ...options.bounds } : options.bounds);
  const admit = concurrentCalls('ReadResult', bounds.maxReadsInFlight, bounds.maxReadsPerTenant, 'try again shortly, or read fewer pages at once');

  return async function readResult(request: ReadResultRequest, call: grpc.ServerUnaryCall<ReadResultRequest, ReadResultResponse>): Promise<ReadResultResponse> {
    const principal = authenticate(call, 'dispatch');
    // The client's mistake, not a handle gone (it was NOT_FOUND, "it may have expired").
    if (request.resultHandle === '') throw invalidArgument('result_handle', 'result_handle is empty: pass the result_handle of a result that was truncated');
    // A page fits in one response (max_response_bytes) whatever its characters (4 bytes of UTF-8 at most each).
    const limit = Math.min(request.limit === 0 ? READ_DEFAULT : request.limit, READ_MAX, Math.max(1, Math.floor((deps.limits.maxResponseBytes - SLACK_BYTES) / 4)));
    const release = admit(principal.tenant);
    const page = await deps.store
      .readResultPage(principal.tenant, request.resultHandle, request.offset, limit)
      .catch(() => {
        throw new RpcError(grpc.status.UNAVAILABLE, 'the result store is unreachable; try again shortly', 'STORE_UNAVAILABLE');
      })
      .finally(release);
    if (page === undefined) throw notFound(deps.store, principal.tenant, request.resultHandle);
    const offset = Math.min(request.offset, page.totalChars);
    return create(ReadResultResponseSchema, { text: page.text, totalChars: page.totalChars, nextOffset: offset + codePointLength(page.text) });
  }
}

/**
 * ReadResult of a handle the store does not hold: NOT_FOUND, reason RESULT_EVICTED when the store
 * evicted its spill for room (its budget across sessions: other sessions' large results took it,
 * seconds after it was issued, which "it may have expired" hid from the caller and the operator),
 * naming the budget and what raises it; else RESULT_NOT_FOUND (unknown, expired, its session ended).
 */
function notFound(store: Store, tenant: string, handle: string): RpcError {
  // The handle is the client's own text, echoed as other ids are: cut, its invisible characters escaped.
  const shown = `result handle "${terminalText(shortened(handle, 100))}"`;
  const eviction = store.evictedResult?.(tenant, handle);
  if (eviction === undefined) return new RpcError(grpc.status.NOT_FOUND, `${shown} not found (it may have expired)`, 'RESULT_NOT_FOUND');
  return new RpcError(
    grpc.status.NOT_FOUND,
    `${shown} not found: its result was evicted to keep this replica's stored results under their budget of ${eviction.budgetChars} characters (newer results took its room before it expired); ${eviction.remedy}`,
    'RESULT_EVICTED',
    { max_spilled_chars: eviction.budgetChars },
  );
}
