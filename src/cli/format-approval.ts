import type { Timestamp } from '@bufbuild/protobuf/wkt';
import type { PendingApproval } from '../../gen/dispatch/v1/dispatch_pb';

const epochMs = (t: Timestamp | undefined): number => (t ? Number(t.seconds) * 1000 + Math.floor(t.nanos / 1e6) : 0);

/**
 * A waiting approval as readable lines: its id, session, call and tool, the seconds left before it
 * times out (refused), the reason; then the arguments that run if approved, and whether a policy
 * changed them.
 */
export function formatApproval(approval: PendingApproval, nowMs = Date.now()): string {
  const left = Math.max(0, Math.round((epochMs(approval.expiresAt) - nowMs) / 1000));
  const modified = approval.argumentsModified ? '  (modified by a policy)' : '';
  return [
    `${approval.approvalId}  session ${approval.sessionId}  call ${approval.toolCallId}  ${approval.tool}  expires in ${left}s`,
    `  reason: ${approval.reason}`,
    `  arguments: ${approval.arguments}${modified}`,
  ].join('\n');
}
