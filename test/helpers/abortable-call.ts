import type { RedactionCall } from '../../src/middleware';

/** A redaction job's call whose abort the test fires, recording what it is told of a late answer (`told`). */
export function abortableCall(tenant: string, deadline = Date.now() + 60_000): RedactionCall & { abort(): void; readonly told: boolean[] } {
  const listeners = new Set<(reason: unknown) => void>();
  const told: boolean[] = [];
  let aborted = false;
  return {
    tenant,
    deadline,
    told,
    onAbort(listener) {
      if (aborted) {
        listener(new Error('aborted'));
        return () => undefined;
      }
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    lateAnswerPending: (answered) => void told.push(answered),
    abort() {
      aborted = true;
      for (const listener of [...listeners]) listener(new Error('aborted'));
    },
  };
}
