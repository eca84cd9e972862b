import { redactSecrets } from '../middleware';
import { shortened } from './bound-result';

/**
 * Longest arguments text or reason an approval shows (APPROVAL_REQUESTED, ListApprovals): a longer
 * one is cut, with `...` after. The events' cap on a text from outside (EVENT_TEXT_CHARS, events/event-bounds.ts).
 */
export const APPROVAL_TEXT_CHARS = 8_000;

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
}

/**
 * A text as an approver is shown it. Redacted whole, then cut: a secret at the cut would
 * otherwise be kept in part, and JSON is redacted value by value only while it parses.
 */
export const approvalText = (text: string): string => shortened(redactSecrets(text), APPROVAL_TEXT_CHARS);

/** The arguments as an approver is shown them (see {@link approvalText}). */
export const approvalArguments = (args: unknown): string => approvalText(JSON.stringify(args) ?? 'null');
