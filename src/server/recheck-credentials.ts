import { status } from '@grpc/grpc-js';
import type { ServerSurfaceCall } from '@grpc/grpc-js/build/src/server-call';
import { RpcError } from './grpc-adapter';
import type { Authenticator, Scope } from './principal';

/**
 * A long-lived stream's check of its credentials, every CREDENTIAL_RECHECK_MS: throws the
 * authenticator's RpcError once its token is revoked or lacks `scope`, and UNAUTHENTICATED once
 * the token belongs to another tenant than the stream's (reloaded tokens file): its holder would
 * otherwise see the old tenant's events, or its worker serve the old tenant's calls.
 */
export function recheckCredentials(authenticate: Authenticator, call: ServerSurfaceCall, scope: Scope, tenant: string): void {
  if (authenticate(call, scope).tenant !== tenant) throw new RpcError(status.UNAUTHENTICATED, 'the token now belongs to another tenant; reconnect');
}
