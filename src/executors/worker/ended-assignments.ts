/**
 * The assignments from other replicas that ended or were cancelled here, by id, each with the
 * epoch ms until which a copy could still matter (its deadline plus the grace): a copy arriving
 * late (sent again after a stalled publish, or overtaken by its cancel) is not run.
 */
export interface EndedAssignments {
  has(id: string): boolean;
  /** Remembers `id` until `until`; past `max` ids, or past their time, the oldest are forgotten. */
  remember(id: string, until: number): void;
}

/** Remembers at most `max` assignments (WorkerOptions.maxRememberedAssignments), oldest first out. */
export function createEndedAssignments(max: number): EndedAssignments {
  const ended = new Map<string, number>();
  return {
    has: (id) => ended.has(id),
    remember(id, until) {
      ended.delete(id);
      ended.set(id, until);
      const now = Date.now();
      for (const [oldest, expires] of ended) {
        if (ended.size <= max && expires > now) break;
        ended.delete(oldest);
      }
    },
  };
}
