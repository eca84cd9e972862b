import type { CallOptions, createDispatchClient } from '../client';
import { terminalWord } from '../events/terminal-text';
import { formatApproval } from './format-approval';
import { unknownSubcommand, UsageError } from './usage';

/** The flags of `dispatchctl approvals`. */
export interface ApprovalsFlags {
  readonly session?: string;
  /** As the command line gives it (repeatable, for events); ListApprovals filters by one tool. */
  readonly tool?: readonly string[];
  readonly approve?: boolean;
  readonly deny?: boolean;
  readonly reason?: string;
}

/** The RPCs the command calls. */
type ApprovalsClient = Pick<ReturnType<typeof createDispatchClient>, 'listApprovals' | 'resolveApproval'>;

/** ResolveApproval's check on an id: longer is nobody's (ids are UUIDs). */
const MAX_APPROVAL_ID = 256;

/** What `approvals` was asked: to list the calls waiting, or to decide one. */
export type ApprovalsRequest = { readonly list: true } | { readonly list: false; readonly id: string; readonly approve: boolean };

const LIST: ApprovalsRequest = { list: true };

/**
 * Reads `approvals`' arguments and flags; a missing id or decision, both decisions, or anything
 * else off is a UsageError. Checked before the commands (and gRPC) load, by checkCommand.
 */
export function approvalsRequest(args: readonly string[], flags: ApprovalsFlags): ApprovalsRequest {
  const [sub, id, ...extra] = args;
  if (flags.tool !== undefined && flags.tool.length > 1) {
    throw new UsageError(`approvals lists the calls of one --tool, got ${flags.tool.length} (${flags.tool.map((t) => JSON.stringify(t)).join(', ')})`);
  }
  // ListApprovals reads an empty tool as any: `--tool "$UNSET"` listed every tool's calls.
  if (flags.tool?.[0] === '') throw new UsageError('--tool must not be empty (approvals lists the calls of the tool it names)');
  if (sub === undefined || sub === 'list') {
    if (id !== undefined) throw new UsageError(`approvals list takes no arguments, got ${JSON.stringify(id)} (filter with --session or --tool)`);
    return LIST;
  }
  if (sub !== 'resolve') throw unknownSubcommand('approvals', sub, ['list', 'resolve']);
  if (id === undefined || id === '') throw new UsageError('approvals resolve needs ID (as approvals lists it) and --approve or --deny');
  if (extra.length > 0) throw new UsageError(`approvals resolve takes one ID, got also ${JSON.stringify(extra[0])}`);
  if (id.length > MAX_APPROVAL_ID) throw new UsageError(`approvals resolve: ID is longer than ${MAX_APPROVAL_ID} characters`);
  const approve = flags.approve === true;
  if (approve === (flags.deny === true)) throw new UsageError(`approvals resolve needs ${approve ? 'only one' : 'one'} of --approve or --deny`);
  return { list: false, id, approve };
}

/**
 * `dispatchctl approvals [list]` prints the calls waiting for approval (ListApprovals);
 * `dispatchctl approvals resolve ID --approve|--deny [--reason R]` decides one (ResolveApproval):
 * approved, the call runs with the arguments listed; denied, it is refused BLOCKED, and the model
 * reads `--reason R` in its error (`...; the approver said: R`: resolve-approval.ts). Resolves with
 * the exit code: 0, or 1 when the id was not waiting (unknown, already decided, timed out, ended
 * or another tenant's). A usage error throws (approvalsRequest).
 */
export async function approvalsCommand(dispatch: ApprovalsClient, args: readonly string[], flags: ApprovalsFlags, options: CallOptions, out: (line: string) => void): Promise<number> {
  const request = approvalsRequest(args, flags);
  if (request.list) {
    const { approvals, truncated } = await dispatch.listApprovals({ sessionId: flags.session ?? '', tool: flags.tool?.[0] ?? '' }, options);
    for (const approval of approvals) out(formatApproval(approval));
    if (approvals.length === 0) out('(no approvals waiting)');
    if (truncated) out('(more are waiting than one answer holds: filter with --session or --tool)');
    return 0;
  }
  const { id, approve } = request;
  const { resolved } = await dispatch.resolveApproval({ approvalId: id, approve, reason: flags.reason ?? '' }, options);
  out(resolved ? `${approve ? 'approved' : 'denied'} ${terminalWord(id)}` : `approval ${terminalWord(id)} is not waiting: unknown, already decided, timed out, ended, or another tenant's`);
  return resolved ? 0 : 1;
}
