import type { WorkerLink } from './worker-link';

/**
 * How long an assignment abandoned after it was sent (timed out, cancelled) still counts against
 * its worker when it does not answer it (four times as long as it ran, between these bounds), and
 * how many such a worker is charged at most: a worker that never answers is picked again only once
 * its peers are as busy, or after this time. Workers need not answer a cancel (the examples do
 * not), so a healthy worker whose call once timed out is not sidelined for long; any answer of
 * its to a call clears its charges.
 */
const OVERDUE_MIN_MS = 2_000;
const OVERDUE_MAX_MS = 30_000;
const MAX_OVERDUE = 64;

/** Charges `link`'s worker with an assignment abandoned after it ran `ranMs`: one that never answers is not picked again at once. */
export function chargeOverdue(link: WorkerLink, assignmentId: string, ranMs: number): void {
  link.overdue.set(assignmentId, Date.now() + Math.min(OVERDUE_MAX_MS, Math.max(OVERDUE_MIN_MS, 4 * ranMs)));
  if (link.overdue.size > MAX_OVERDUE) link.overdue.delete(link.overdue.keys().next().value!);
}

/** Assignments the link was sent, has not answered and still counts (expired ones are forgotten). */
export function outstanding(link: WorkerLink, now: number): number {
  // Each lasts as long as its call ran (within bounds), so any of them (64 at most) may be over.
  for (const [id, until] of link.overdue) if (until <= now) link.overdue.delete(id);
  return link.pending.size + link.overdue.size;
}
