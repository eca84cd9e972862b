import { DispatchMode, type DispatchRequest } from '../../gen/dispatch/v1/dispatch_pb';
import { DEFAULT_MAX_CONCURRENCY } from '../waves/wave-options';
import type { ParallelDispatcher } from './dispatch-service';

/**
 * The most tool calls `request` runs at once: 1 for a sequential turn, the smaller of its calls and
 * its max_concurrency for a parallel one (a turn the service runs with `parallel`: parallel mode,
 * two calls or more; see runTurn). A max_concurrency of 0 is the dispatcher's default (its
 * `defaultMaxConcurrency`, see createParallelDispatcher), 8 for one that does not say.
 */
export function peakCalls(request: Pick<DispatchRequest, 'mode' | 'calls' | 'maxConcurrency'>, parallel: ParallelDispatcher | undefined): number {
  if (request.mode !== DispatchMode.PARALLEL || request.calls.length < 2 || !parallel) return 1;
  const fallback = (parallel as { readonly defaultMaxConcurrency?: number }).defaultMaxConcurrency ?? DEFAULT_MAX_CONCURRENCY;
  return Math.min(request.calls.length, request.maxConcurrency === 0 ? fallback : request.maxConcurrency);
}
