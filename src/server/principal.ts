import type { ServerSurfaceCall } from '@grpc/grpc-js/build/src/server-call';

/** A scope a caller may hold. */
export type Scope = 'dispatch' | 'subscribe' | 'admin' | 'worker';

/** Who is calling: their tenant and what they may do. */
export interface Principal {
  readonly tenant: string;
  readonly scopes: ReadonlySet<Scope>;
}

/** Finds the caller of an RPC and checks it holds `scope`; throws an RpcError otherwise. */
export type Authenticator = (call: ServerSurfaceCall, scope: Scope) => Principal;

/** How often a long-lived stream (Subscribe, Work) checks its credentials again, in ms: a token revoked ends it. */
export const CREDENTIAL_RECHECK_MS = 5_000;

/** The tenant of the embedded default, when no authentication is configured. */
export const DEFAULT_TENANT = 'default';

const ALL_SCOPES: ReadonlySet<Scope> = new Set<Scope>(['dispatch', 'subscribe', 'admin', 'worker']);
const ANONYMOUS: Principal = Object.freeze({ tenant: DEFAULT_TENANT, scopes: ALL_SCOPES });

/** No authentication (loopback only): every caller is the default tenant with every scope. */
export const allowAll: Authenticator = () => ANONYMOUS;
