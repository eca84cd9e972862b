import { create, toBinary } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import * as grpc from '@grpc/grpc-js';
import { ListApprovalsResponseSchema, PendingApprovalSchema, type ListApprovalsRequest, type ListApprovalsResponse, type PendingApproval as PendingApprovalMessage } from '../../gen/dispatch/v1/dispatch_pb';
import { listedApproval } from '../pipeline';
import { concurrentCalls, invalidArgument, RpcError, unary, type Authenticator } from '../server';
import type { Logger } from '../log';
import { clientIdRefusal } from '../parse/client-id';
import type { ApprovalFilter, PendingApproval } from './approvals';
import { LIST_PAGE_APPROVALS, type ApprovalsPage } from './approvals-index';
import { ApprovalsUnlistedError } from './approvals-relay';

/** Lists the approvals waiting for a tenant; the relay's across replicas (a page), else the local registry's. */
export type ListApprovals = (tenant: string, filter: ApprovalFilter) => PendingApproval[] | ApprovalsPage | Promise<PendingApproval[] | ApprovalsPage>;

/** Room left in a response for its framing and the truncated flag, in bytes. */
const RESPONSE_SLACK_BYTES = 1024;
/** Longest session id or tool name a filter may name, in code points (the rule of client ids, client-id.ts, with this bound). */
const MAX_FILTER_CHARS = 1024;

/**
 * ListApprovals running at once on a replica, all tenants together and for one tenant: each reads
 * up to a page (about 1 MB) from Redis, so that approvers listing in a loop cannot take the store's
 * time from every call.
 */
export const MAX_LISTINGS_IN_FLIGHT = 8;
export const MAX_LISTINGS_PER_TENANT = 2;

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
 * approvals waiting for the caller's tenant, the first to expire first, at most
 * LIST_PAGE_APPROVALS and no more than fit in `maxResponseBytes` (limits.max_response_bytes; then `truncated`), each with its
 * arguments and reason cut as listedApproval says. At most MAX_LISTINGS_IN_FLIGHT run at once
 * (MAX_LISTINGS_PER_TENANT per tenant); past them RESOURCE_EXHAUSTED (OVERLOADED) at once. Redis
 * not answering is UNAVAILABLE.
 */
export function listApprovalsHandler(authenticate: Authenticator, logger: Logger, maxResponseBytes: number, listWith: () => ListApprovals): grpc.UntypedHandleCall {
  const admit = concurrentCalls('ListApprovals', MAX_LISTINGS_IN_FLIGHT, MAX_LISTINGS_PER_TENANT, 'try again shortly');
  return unary(logger, async (request: ListApprovalsRequest, call: grpc.ServerUnaryCall<ListApprovalsRequest, ListApprovalsResponse>) => {
    const principal = authenticate(call, 'dispatch');
    const sessionRefusal = clientIdRefusal('session_id', request.sessionId, 'a session id', MAX_FILTER_CHARS);
    if (sessionRefusal !== undefined) throw invalidArgument('session_id', sessionRefusal);
    const toolRefusal = clientIdRefusal('tool', request.tool, 'a tool name', MAX_FILTER_CHARS);
    if (toolRefusal !== undefined) throw invalidArgument('tool', toolRefusal);
    const release = admit(principal.tenant);
    let page: ApprovalsPage;
    try {
      const found = await listWith()(principal.tenant, { sessionId: request.sessionId, tool: request.tool });
      page = Array.isArray(found) ? { approvals: found, truncated: false } : found;
    } catch (error) {
      if (error instanceof ApprovalsUnlistedError) throw new RpcError(grpc.status.UNAVAILABLE, `${error.message}; ask again shortly`, 'STORE_UNAVAILABLE');
      throw error;
    } finally {
      release();
    }
    const room = maxResponseBytes - RESPONSE_SLACK_BYTES;
    const approvals: PendingApprovalMessage[] = [];
    let bytes = 0;
    for (const approval of page.approvals) {
      const message = toMessage(listedApproval(approval));
      // Its bytes, and at most 6 of tag and length before them.
      bytes += toBinary(PendingApprovalSchema, message).length + 6;
      if (approvals.length === LIST_PAGE_APPROVALS || bytes > room) break;
      approvals.push(message);
    }
    return create(ListApprovalsResponseSchema, { approvals, truncated: page.truncated || approvals.length < page.approvals.length });
  });
}
