import * as grpc from '@grpc/grpc-js';
import type { ServerSurfaceCall } from '@grpc/grpc-js/build/src/server-call';
import type { MtlsTenantField } from '../config';
import { RpcError, type Authenticator, type Principal, type Scope } from '../server';
import { certificateTenant, certificateTenantRefusal } from './client-certificate';
import type { TokenTable } from './token-table';

/** How callers are recognised. */
export interface AuthenticatorOptions {
  /** The current token table (it may be swapped when a tokens file changes). */
  tokens(): TokenTable;
  /** Under mutual TLS, the certificate subject field naming the tenant, and the scopes it grants. */
  readonly mtls?: { readonly tenantFrom: MtlsTenantField; readonly scopes: ReadonlySet<Scope> };
}

const BEARER = /^Bearer +([^\s]+) *$/i;
const unauthenticated = (message: string) => new RpcError(grpc.status.UNAUTHENTICATED, message);

function bearerToken(call: ServerSurfaceCall): string | undefined {
  const values = call.metadata.get('authorization');
  if (values.length === 0) return undefined;
  // Never true over the network: Node's HTTP/2 server keeps only the first of repeated
  // `authorization` header fields (gRPC core sends each value as its own), so the first decides
  // and a second is never seen (docs/security.md, test/security/repeated-authorization.test.ts).
  // Kept for a caller that hands the authenticator Metadata holding two.
  if (values.length > 1) throw unauthenticated('more than one authorization header was sent');
  const match = typeof values[0] === 'string' ? BEARER.exec(values[0]) : null;
  if (!match) throw unauthenticated('the authorization metadata must be "Bearer <token>"');
  return match[1];
}

/**
 * An Authenticator over bearer tokens (`authorization: Bearer <token>`) and, when configured, the
 * tenant named by a verified client certificate. A wrong or missing credential is UNAUTHENTICATED;
 * a caller without the scope an RPC needs is PERMISSION_DENIED, naming the scope.
 */
export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  return (call, scope) => {
    const token = bearerToken(call);
    const certTenant = options.mtls ? certificateTenant(call, options.mtls.tenantFrom) : undefined;
    const certRefusal = certTenant !== undefined && options.mtls ? certificateTenantRefusal(certTenant, options.mtls.tenantFrom) : undefined;
    if (certRefusal !== undefined) throw unauthenticated(certRefusal);
    let principal: Principal;
    if (token !== undefined) {
      const found = options.tokens().find(token);
      if (!found) throw unauthenticated('the bearer token is not valid');
      if (certTenant !== undefined && certTenant !== found.tenant) throw unauthenticated("the bearer token's tenant does not match the client certificate's");
      principal = found;
    } else if (certTenant !== undefined && options.mtls) {
      principal = { tenant: certTenant, scopes: options.mtls.scopes };
    } else {
      throw unauthenticated(`authentication required: send the metadata "authorization: Bearer <token>"${options.mtls ? ' or a client certificate naming the tenant' : ''}`);
    }
    if (!principal.scopes.has(scope)) {
      throw new RpcError(grpc.status.PERMISSION_DENIED, `${call.getPath()} needs the "${scope}" scope, which this caller (tenant "${principal.tenant}") does not hold`, 'PERMISSION_DENIED', { scope, tenant: principal.tenant });
    }
    return principal;
  };
}
