import { create } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { EraseTenantResponseSchema, type EraseTenantRequest, type EraseTenantResponse } from '../../gen/dispatch/v1/dispatch_pb';
import type { PipelineDeps } from '../pipeline';
import { StoreUnavailableError } from '../store';
import { invalidArgument, RpcError, unary } from './grpc-adapter';
import type { Authenticator } from './principal';
import { removeShared } from './registry-service';

/** Sessions EraseTenant ends at once (each one store step, on Redis one round trip). */
export const ENDS_AT_ONCE = 16;

/**
 * EraseTenant (scope admin): with `remove_tools`, removes the tools the caller's tenant registered,
 * each as RemoveTool does (shared first, so no replica serves it again); then ends every session of
 * the tenant the store holds anything of (Store.tenantSessions), each as EndSession does, so that
 * each replica drops what it keeps beside the store (memoized reads, scratch directories, pending
 * approvals) too; last, every replica drops the tenant's tool stats and metric label pairs
 * (Store.tenantErased). `confirm_tenant` must name the caller's tenant. A store failure midway answers
 * UNAVAILABLE saying how far it got: what was erased stays erased, and asking again goes on.
 * A cancelled call stops between two runs of ends.
 */
export function eraseTenantHandler(deps: Pick<PipelineDeps, 'store' | 'registry' | 'limits' | 'logger'>, authenticate: Authenticator) {
  const { store, registry, logger } = deps;
  return unary(logger, async (request: EraseTenantRequest, call: grpc.ServerUnaryCall<EraseTenantRequest, EraseTenantResponse>): Promise<EraseTenantResponse> => {
    const { tenant } = authenticate(call, 'admin');
    if (request.confirmTenant !== tenant) throw invalidArgument('confirm_tenant', `confirm_tenant must name the caller's tenant, ${JSON.stringify(tenant)}, to erase it; got ${JSON.stringify(request.confirmTenant.slice(0, 200))}`);
    let toolsRemoved = 0;
    if (request.removeTools) {
      // Its own tools, those an operator's tool of the same name (an MCP server's, listed later) hides too.
      for (const tool of registry.list(tenant, true)) {
        const again = `ask EraseTenant again (${toolsRemoved} of the tenant's tools were removed before it; no session was ended yet)`;
        if (await removeShared(registry, tenant, tool.name, deps.limits.storeTimeoutMs, again)) toolsRemoved++;
      }
    }
    let sessionsEnded = 0;
    try {
      for await (const ids of store.tenantSessions(tenant)) {
        for (let i = 0; i < ids.length; i += ENDS_AT_ONCE) {
          if (call.cancelled) throw new RpcError(grpc.status.CANCELLED, `EraseTenant was cancelled after ending ${sessionsEnded} sessions; ask again to go on`);
          const run = ids.slice(i, i + ENDS_AT_ONCE);
          await Promise.all(run.map((sessionId) => store.endSession({ tenant, sessionId })));
          sessionsEnded += run.length;
        }
      }
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      logger.warn('tenant erasure stopped: the session store failed', { tenant, sessions_ended: sessionsEnded, tools_removed: toolsRemoved, error: error.message });
      throw new RpcError(grpc.status.UNAVAILABLE, `the session store failed after ${sessionsEnded} sessions of the tenant were ended (${error.message}); ask again to end the rest`, 'STORE_UNAVAILABLE');
    }
    // Last, once no session is left to count again: every replica drops the tenant's tool stats and metric label pairs.
    await store.tenantErased(tenant).catch((error: Error) => {
      logger.warn('tenant erasure: the other replicas were not told', { tenant, sessions_ended: sessionsEnded, tools_removed: toolsRemoved, error: error.message });
      throw new RpcError(grpc.status.UNAVAILABLE, `the tenant's ${sessionsEnded} sessions were ended, but the other replicas could not be told to drop its tool stats and metric labels (${error.message}); ask again`, 'STORE_UNAVAILABLE');
    });
    logger.info('tenant erased', { tenant, sessions_ended: sessionsEnded, tools_removed: toolsRemoved });
    return create(EraseTenantResponseSchema, { sessionsEnded: BigInt(sessionsEnded), toolsRemoved });
  });
}
