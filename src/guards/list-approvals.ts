import { create, toBinary } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import * as grpc from '@grpc/grpc-js';
import { ListApprovalsResponseSchema, PendingApprovalSchema, type ListApprovalsRequest, type ListApprovalsResponse, type PendingApproval as PendingApprovalMessage } from '../../gen/dispatch/v1/dispatch_pb';
import { RpcError, unary, type Authenticator } from '../server';
import type { Logger } from '../log';
import type { ApprovalFilter, PendingApproval } from './approvals';
import { MAX_INDEXED_APPROVALS } from './approvals-index';
import { ApprovalsUnlistedError } from './approvals-relay';

/** Lists the approvals waiting for a tenant; the relay's across replicas, else the local registry's. */
export type ListApprovals = (tenant: string, filter: ApprovalFilter) => PendingApproval[] | Promise<PendingApproval[]>;

/** Room left in a response for its framing and the truncated flag, in bytes. */
const RESPONSE_SLACK_BYTES = 1024;
/** Longest session id or tool name a filter may name. */
const MAX_FILTER_CHARS = 1024;

const toMessage = (approval: PendingApproval): PendingApprovalMessage =>
  create(PendingApprovalSchema, {
    approvalId: approval.approvalId,
    sessionId: approval.sessionId,
    toolCallId: approval.toolCallId,
    tool: approval.tool,
    arguments: approval.arguments,
    argumentsModified: approval.argumentsModified,
    reason: approval.reason,
    requestedAt: timestampFromMs(Math.round(approval.requestedAt)),
    expiresAt: timestampFromMs(Math.round(approval.expiresAt)),
  });

/**
 * The ListApprovals handler of DispatchService (scope `dispatch`, as ResolveApproval): the
 * approvals waiting for the caller's tenant, the first to expire first, at most 1,000 and no more
 * than fit in `maxMessageBytes` (then `truncated`). Redis not answering is UNAVAILABLE.
 */
export function listApprovalsHandler(authenticate: Authenticator, logger: Logger, maxMessageBytes: number, listWith: () => ListApprovals): grpc.UntypedHandleCall {
  return unary(logger, async (request: ListApprovalsRequest, call: grpc.ServerUnaryCall<ListApprovalsRequest, ListApprovalsResponse>) => {
    const principal = authenticate(call, 'dispatch');
    if (request.sessionId.length > MAX_FILTER_CHARS || request.tool.length > MAX_FILTER_CHARS) throw new RpcError(grpc.status.INVALID_ARGUMENT, `session_id and tool are at most ${MAX_FILTER_CHARS} characters`);
    let found: PendingApproval[];
    try {
      found = await listWith()(principal.tenant, { sessionId: request.sessionId, tool: request.tool });
    } catch (error) {
      if (error instanceof ApprovalsUnlistedError) throw new RpcError(grpc.status.UNAVAILABLE, `${error.message}; ask again shortly`);
      throw error;
    }
    const room = maxMessageBytes - RESPONSE_SLACK_BYTES;
    const approvals: PendingApprovalMessage[] = [];
    let bytes = 0;
    for (const approval of found) {
      const message = toMessage(approval);
      // Its bytes, and at most 6 of tag and length before them.
      bytes += toBinary(PendingApprovalSchema, message).length + 6;
      if (approvals.length === MAX_INDEXED_APPROVALS || bytes > room) break;
      approvals.push(message);
    }
    return create(ListApprovalsResponseSchema, { approvals, truncated: approvals.length < found.length });
  });
}
