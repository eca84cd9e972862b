import type { Timestamp } from '@bufbuild/protobuf/wkt';
import type { PendingApproval } from '../../gen/dispatch/v1/dispatch_pb';
import { terminalText, terminalWord } from '../events/terminal-text';

const epochMs = (t: Timestamp | undefined): number => (t ? Number(t.seconds) * 1000 + Math.floor(t.nanos / 1e6) : 0);

/**
 * A waiting approval as readable lines: its id, session, call and tool, the seconds left before it
 * times out (refused), the reason; then the arguments that run if approved, and whether a policy
 * changed them. Every field but the time is escaped (terminalWord, terminalText): a call id, a
 * reason and arguments come from the model, and a raw CR or ESC in one could print a fake line.
 */
export function formatApproval(approval: PendingApproval, nowMs = Date.now()): string {
  const left = Math.max(0, Math.round((epochMs(approval.expiresAt) - nowMs) / 1000));
  const modified = approval.argumentsModified ? '  (modified by a policy)' : '';
  return [
    `${terminalWord(approval.approvalId)}  session ${terminalWord(approval.sessionId)}  call ${terminalWord(approval.toolCallId)}  ${terminalWord(approval.tool)}  expires in ${left}s`,
    `  reason: ${terminalText(approval.reason)}`,
    `  arguments: ${terminalText(approval.arguments)}${modified}`,
  ].join('\n');
}
