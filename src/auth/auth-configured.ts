import type { AuthConfig } from '../config';

/**
 * Whether callers are authenticated, as the auth plugin decides it: bearer tokens in `auth.tokens`,
 * a tokens file (DISPATCH_AUTH_TOKENS_FILE, else `auth.tokens_file`), or tenants from client
 * certificates (`auth.mtls_tenant_from` under mutual TLS, `tls.ca`). Without any, every caller is
 * tenant `default`: only one tenant can call.
 */
export function authConfigured(auth: AuthConfig, env: NodeJS.ProcessEnv, tls?: { readonly ca?: string }): boolean {
  // An empty variable counts as unset, as every dispatchd variable does.
  return auth.tokens.length > 0 || Boolean(env.DISPATCH_AUTH_TOKENS_FILE) || auth.tokensFile !== undefined || (auth.mtlsTenantFrom !== undefined && Boolean(tls?.ca));
}
