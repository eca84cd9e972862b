import { create } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { ResolveApprovalResponseSchema, type ResolveApprovalRequest, type ResolveApprovalResponse } from '../../gen/dispatch/v1/dispatch_pb';
import type { Logger } from '../log';
import { invalidArgument, RpcError, unary, type Authenticator } from '../server';
import { DecisionUnknownError } from './approvals-relay';
import type { Approvals } from './approvals';
import { listApprovalsHandler, type ListApprovals } from './list-approvals';

/** Decides a waiting approval; the relay's across replicas, else the local registry's. */
export type ResolveApproval = (approvalId: string, approve: boolean, tenant: string) => boolean | Promise<boolean>;

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
 * approval is unknown, already decided, timed out or belongs to another tenant.
 */
export function approvalHandlers(approvals: Approvals, authenticate: Authenticator, logger: Logger, resolveWith: () => ResolveApproval = () => approvals.resolve.bind(approvals), listing: ListingOptions = {}): grpc.UntypedServiceImplementation {
  const listWith = listing.listWith ?? (() => approvals.list.bind(approvals));
  return {
    listApprovals: listApprovalsHandler(authenticate, logger, listing.maxResponseBytes ?? 4 * 1024 * 1024, listWith),
    resolveApproval: unary(logger, async (request: ResolveApprovalRequest, call: grpc.ServerUnaryCall<ResolveApprovalRequest, ResolveApprovalResponse>) => {
      const principal = authenticate(call, 'dispatch');
      if (request.approvalId === '') throw invalidArgument('approval_id', 'approval_id is required');
      // Ids are UUIDs (36 characters): a longer one is nobody's, and would be logged whole.
      if (request.approvalId.length > 256) throw invalidArgument('approval_id', 'approval_id is longer than 256 characters');
      let resolved: boolean;
      try {
        resolved = await resolveWith()(request.approvalId, request.approve, principal.tenant);
      } catch (error) {
        if (error instanceof DecisionUnknownError) throw new RpcError(grpc.status.UNAVAILABLE, `${error.message}; ask again (once applied, a decision answers resolved=false)`, 'STORE_UNAVAILABLE', { approval_id: request.approvalId });
        throw error;
      }
      const fields = { approvalId: request.approvalId, approve: request.approve, resolved, reason: request.reason.slice(0, 200) };
      // An unknown or stale id is at debug: any client can send one per RPC.
      if (resolved) logger.info('approval resolved', fields);
      else logger.debug('approval not resolved', fields);
      return create(ResolveApprovalResponseSchema, { resolved });
    }),
  };
}
