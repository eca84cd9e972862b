// Which of a tool's workers may run a call as the pipeline treats it (read-only or not).
import { ErrorKind } from '../../../gen/dispatch/v1/dispatch_pb';
import { Effect, type ToolSpec } from '../../../gen/dispatch/v1/tool_pb';
import { DispatchError } from '../../errors';
import { noWorkerError } from './worker-errors';
import type { WorkerLink } from './worker-link';

/** The names among a hello's `specs` that it declares read-only (WorkerLink.readOnlyTools). */
export const declaredReadOnly = (specs: readonly ToolSpec[]): ReadonlySet<string> => new Set(specs.filter((s) => s.effect === Effect.READ_ONLY).map((s) => s.name));

/**
 * The links among `links` that may run a call of `tool` treated as read-only when `readOnly`:
 * those whose own hello declared it read-only. A tool's registration is the last hello's, so
 * workers of one tool may disagree (one mid-upgrade): a call registered read-only gets no
 * idempotency claim, is retried after a timeout while it ran and is memoized, so sent to a worker
 * that declared the tool side-effecting, its side effect could run twice. A side-effecting call
 * may go to any (a worker declaring read-only loses nothing by the stricter treatment). The list
 * is returned as it is when none is left out (the usual case: no copy per call).
 */
export function runsAsRegistered(links: WorkerLink[] | undefined, tool: string, readOnly: boolean): WorkerLink[] | undefined {
  if (!readOnly || !links || links.every((l) => l.readOnlyTools.has(tool))) return links;
  return links.filter((l) => l.readOnlyTools.has(tool));
}

/**
 * Every worker connected here for a call of `tool` treated as read-only declared it
 * side-effecting (`links`, see runsAsRegistered), or undefined when not so. UNAVAILABLE before,
 * recoverable: nothing was sent, so a retry is safe (a worker declaring it read-only may connect);
 * told to the breaker as no host (noHost), as noWorkerError is.
 */
export function sideEffectingWorkersError(links: WorkerLink[] | undefined, tool: string, readOnly: boolean): DispatchError | undefined {
  if (!readOnly || !links || links.length === 0) return undefined;
  const ids = [...new Set(links.map((l) => l.workerId))];
  const named = ids.length === 1 ? `worker "${ids[0]}" declares` : `workers ${ids.slice(0, 3).map((id) => `"${id}"`).join(', ')}${ids.length > 3 ? ` and ${ids.length - 3} more` : ''} declare`;
  return new DispatchError(
    ErrorKind.UNAVAILABLE,
    `no worker connected for tool "${tool}" runs it as registered (read-only): ${named} it side-effecting; the tool's registration comes from another worker's hello; the call was not executed`,
    {
      phase: 'before',
      recoverable: true,
      noHost: true,
      suggestion: 'The tool is temporarily unavailable; try again later or use another tool. Operators: make every worker of the tool declare the same effect.',
    },
  );
}

/**
 * Answers a call of `tool` that no worker connected here took (WorkerPool.assign). When every one
 * hosting it declared it side-effecting (see sideEffectingWorkersError), a worker connected to
 * another replica may have declared it read-only (workers upgraded a replica at a time): the call
 * goes to `elsewhere`, given the refusal to stand when none does; before, the refusal was final.
 * Otherwise, or with no `elsewhere`, it is refused: that refusal, or noWorkerError.
 */
export function noRunnableWorker(links: WorkerLink[] | undefined, tool: string, readOnly: boolean, elsewhere?: (refusal: DispatchError) => Promise<string>): Promise<string> {
  const refusal = sideEffectingWorkersError(links, tool, readOnly);
  if (refusal && elsewhere) return elsewhere(refusal);
  return Promise.reject(refusal ?? noWorkerError(tool));
}
