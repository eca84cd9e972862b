import { create } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { ResolveApprovalResponseSchema, type ResolveApprovalRequest, type ResolveApprovalResponse } from '../../gen/dispatch/v1/dispatch_pb';
import type { Logger } from '../log';
import { redactSecrets } from '../middleware';
import { clientIdRefusal } from '../parse/client-id';
import { invalidArgument, RpcError, unary, type Authenticator } from '../server';
import { DecisionUnknownError } from './approvals-relay';
import type { Approvals } from './approvals';
import { listApprovalsHandler, type ListApprovals } from './list-approvals';
import { reasonText } from './reason-text';

/** Decides a waiting approval; the relay's across replicas, else the local registry's. A denial's `reason` reaches the denied call's result; any decision's, its APPROVAL_RESOLVED. */
export type ResolveApproval = (approvalId: string, approve: boolean, tenant: string, reason?: string) => boolean | Promise<boolean>;

/** Where ListApprovals reads, and how large its answer may be. */
export interface ListingOptions {
  /** @default this replica's approvals */
  readonly listWith?: () => ListApprovals;
  /** The largest answer, in bytes. @default 4194304 (Limits.maxResponseBytes) */
  readonly maxResponseBytes?: number;
}

/**
 * The ResolveApproval and ListApprovals handlers of DispatchService (scope `dispatch`).
 * ResolveApproval decides a waiting Ask of the caller's tenant; `resolved` is false when the
 * approval is unknown, already decided, timed out or belongs to another tenant. A denial's
 * `reason` reaches the model in the denied call's error (bounded and escaped: {@link reasonText}); either
 * decision's, bounded and escaped the same way, reaches subscribers in APPROVAL_RESOLVED.
 */
export function approvalHandlers(approvals: Approvals, authenticate: Authenticator, logger: Logger, resolveWith: () => ResolveApproval = () => approvals.resolve.bind(approvals), listing: ListingOptions = {}): grpc.UntypedServiceImplementation {
  const listWith = listing.listWith ?? (() => approvals.list.bind(approvals));
  return {
    listApprovals: listApprovalsHandler(authenticate, logger, listing.maxResponseBytes ?? 4 * 1024 * 1024, listWith),
    resolveApproval: unary(logger, async (request: ResolveApprovalRequest, call: grpc.ServerUnaryCall<ResolveApprovalRequest, ResolveApprovalResponse>) => {
      const principal = authenticate(call, 'dispatch');
      if (request.approvalId === '') throw invalidArgument('approval_id', 'approval_id is required');
      // Ids are UUIDs (36 characters): one past the rule of client ids is nobody's, and would be logged whole.
      const refusal = clientIdRefusal('approval_id', request.approvalId, 'an approval id');
      if (refusal !== undefined) throw invalidArgument('approval_id', refusal);
      let resolved: boolean;
      try {
        // Approved or denied, subscribers read it (APPROVAL_RESOLVED); only a denial's reaches the model (approvals.ts).
        const said = reasonText(request.reason);
        resolved = await resolveWith()(request.approvalId, request.approve, principal.tenant, said);
      } catch (error) {
        if (error instanceof DecisionUnknownError) throw new RpcError(grpc.status.UNAVAILABLE, `${error.message}; ask again (once applied, a decision answers resolved=false)`, 'STORE_UNAVAILABLE', { approval_id: request.approvalId });
        throw error;
      }
      // The reason redacted as its APPROVAL_RESOLVED event's is (an approver may paste a password), then cut.
      const fields = { approvalId: request.approvalId, approve: request.approve, resolved, reason: redactSecrets(request.reason.slice(0, 1_000)).slice(0, 200) };
      // An unknown or stale id is at debug: any client can send one per RPC.
      if (resolved) logger.info('approval resolved', fields);
      else logger.debug('approval not resolved', fields);
      return create(ResolveApprovalResponseSchema, { resolved });
    }),
  };
}
