import { INLINE_REDACTION_CHARS, redactSecretFields, redactSecrets, SPLIT_TAIL_CHARS } from '../middleware';
import { cutUnits, shortened } from './bound-result';

/**
 * Longest arguments text or reason an approval's APPROVAL_REQUESTED shows: a longer one is cut,
 * with `...` after. The events' cap on a text from outside (EVENT_TEXT_CHARS, events/event-bounds.ts).
 */
export const APPROVAL_TEXT_CHARS = 8_000;

/**
 * Longest arguments text ListApprovals shows of an approval (cut again, with `...`), so that a page
 * of 100 stays small: its APPROVAL_REQUESTED carries up to APPROVAL_TEXT_CHARS.
 */
export const LISTED_ARGUMENTS_CHARS = 2_000;
/** Longest reason ListApprovals shows of an approval (cut again, with `...`). */
export const LISTED_REASON_CHARS = 1_000;

/** What an approver is shown of an Ask: on its APPROVAL_REQUESTED event and by ListApprovals. */
export interface ApprovalRequest {
  readonly sessionId: string;
  readonly toolCallId: string;
  /** The tool that runs if approved (a fallback's name on a fallback's attempt). */
  readonly tool: string;
  /**
   * The arguments that run if approved, after the policies and hooks, as JSON text: secrets
   * redacted as events redact them, cut to {@link APPROVAL_TEXT_CHARS}.
   */
  readonly arguments: string;
  /** A policy or hook changed the arguments (a `modify` before the `ask`, or the ask's own). */
  readonly argumentsModified: boolean;
  /** Why it is asked, redacted and cut as the arguments are. */
  readonly reason: string;
  /**
   * Epoch ms by which the wait ends anyway, answered or not: the turn's deadline (the client's),
   * when sooner than the approval timeout. Not shown itself: it bounds the approval's `expiresAt`.
   */
  readonly endsBy?: number;
}

/**
 * How an approval wait ended, as APPROVAL_RESOLVED names it: `approved` or `denied` by a
 * ResolveApproval; `expired` when its time ran out unanswered (the approval timeout, or the turn's
 * deadline when sooner: its `expiresAt`); `cancelled` when cut short before that (the client's
 * cancel, EndSession, shutdown or the drain).
 */
export type ApprovalDecisionKind = 'approved' | 'denied' | 'expired' | 'cancelled';

/** The end of an approval wait, for APPROVAL_RESOLVED and the denied call's result. */
export interface ApprovalDecision {
  readonly decision: ApprovalDecisionKind;
  /** What the approver said with its decision, already bounded and escaped (resolve-approval.ts); absent when it said nothing. */
  readonly reason?: string;
  /** The tenant whose ResolveApproval decided it; absent when nobody did (expired, cancelled). */
  readonly decidedBy?: string;
}

/**
 * A text as an approver is shown it. Redacted whole, then cut: a secret at the cut would
 * otherwise be kept in part, and JSON is redacted value by value only while it parses. Past
 * INLINE_REDACTION_CHARS (arguments run to max_argument_bytes, 1 MiB: ~1 s of the event loop
 * redacted whole), only its head is redacted, shown without its last SPLIT_TAIL_CHARS, as events'
 * debug arguments are (call-observer.ts).
 */
export function approvalText(text: string): string {
  if (text.length <= INLINE_REDACTION_CHARS) return shortened(redactSecrets(text), APPROVAL_TEXT_CHARS);
  const head = redactSecrets(cutUnits(text, INLINE_REDACTION_CHARS));
  return shortened(head, Math.max(0, Math.min(APPROVAL_TEXT_CHARS, head.length - SPLIT_TAIL_CHARS)));
}

/**
 * The arguments as an approver is shown them (see {@link approvalText}), every value under a key
 * named like a secret hidden whatever its length (`"password":"hunter2"`, `"token":1234567`), which
 * the text rules keep as a word: an approval shows argument values that events otherwise do not.
 */
export const approvalArguments = (args: unknown): string => approvalText(JSON.stringify(redactSecretFields(args)) ?? 'null');

/** What ListApprovals shows of an approval: its arguments and reason cut shorter than on its event. */
export const listedApproval = <T extends ApprovalRequest>(request: T): T => {
  if (request.arguments.length <= LISTED_ARGUMENTS_CHARS && request.reason.length <= LISTED_REASON_CHARS) return request;
  return { ...request, arguments: shortened(request.arguments, LISTED_ARGUMENTS_CHARS), reason: shortened(request.reason, LISTED_REASON_CHARS) };
};
