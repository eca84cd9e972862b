import { dirname, resolve } from 'node:path';
import { authConfigured, createAuthenticator, createTokenTable, readTokensFile, serverCredentials, watchTokensFile, type TokenTable } from '../../auth';
import { ConfigError, type TokenEntry } from '../../config';
import type { Scope } from '../../server';
import type { Plugin, PluginContext, PluginFactory } from '../plugin';

/** Options of the auth plugin beyond the config file. */
export interface AuthPluginOptions {
  /** How often a tokens file is re-stat'ed for changes, in ms. @default 2000 */
  readonly reloadIntervalMs?: number;
  /** Where DISPATCH_AUTH_TOKENS_FILE is read from. @default the app's env (buildApp's options), else process.env */
  readonly env?: NodeJS.ProcessEnv;
}

const DEFAULT_MTLS_SCOPES: readonly Scope[] = ['dispatch', 'subscribe'];

/**
 * Authentication and TLS (issue 10): bearer tokens from `auth.tokens` and a tokens file
 * (DISPATCH_AUTH_TOKENS_FILE, else `auth.tokens_file`, reloaded when it changes), tenants from
 * client certificates under mutual TLS, and the listener's TLS credentials (the certificate, key
 * and client CA re-read while the server listens). With none of these
 * configured, every caller is the default tenant (the loopback embedded default).
 */
export function createAuthPlugin(options: AuthPluginOptions = {}): PluginFactory {
  return async (ctx: PluginContext): Promise<Plugin> => {
    const { auth } = ctx.config;
    const env = options.env ?? ctx.options.env ?? process.env;
    // An empty variable counts as unset, as every dispatchd variable does.
    // The variable's path is the working directory's, as every path given to dispatchd outside the
    // config file (--tls-cert, ...); the config file's `tokens_file` is relative to that file.
    const fromEnv = env.DISPATCH_AUTH_TOKENS_FILE || undefined;
    const file = fromEnv !== undefined ? resolve(fromEnv) : auth.tokensFile === undefined ? undefined : resolve(dirname(ctx.config.file), auth.tokensFile);
    const tls = ctx.options.tls;
    const credentials = tls ? serverCredentials(tls, ctx.logger) : undefined;
    const mtls = auth.mtlsTenantFrom && tls?.ca ? { tenantFrom: auth.mtlsTenantFrom, scopes: new Set((auth.mtlsScopes ?? DEFAULT_MTLS_SCOPES) as Scope[]) } : undefined;
    if (auth.mtlsTenantFrom && !tls?.ca) ctx.logger.warn('auth.mtls_tenant_from is ignored: it needs mutual TLS (--tls-ca)', {});
    if (!authConfigured(auth, env, tls)) {
      // `auth: { tokens: [] }` (or `auth: {}`) read as authentication on, and let every caller in as `default`.
      if (auth.written && auth.mtlsTenantFrom === undefined) {
        throw new ConfigError(ctx.config.file, 'auth', 'turns on no authentication: tokens is empty and there is no tokens_file (nor DISPATCH_AUTH_TOKENS_FILE) or mtls_tenant_from, so every caller would be tenant "default", unauthenticated; give it tokens or a tokens_file (an empty tokens file lets nobody in), or remove auth: to run without authentication');
      }
      return { name: 'auth', credentials };
    }

    // Inline entries come first; a digest in both the config and the tokens file is named in the latter.
    const inline = auth.tokens.length;
    const origin = (i: number) => (i < inline || file === undefined ? { file: ctx.config.file, path: `auth.tokens[${i}]` } : { file, path: `tokens[${i - inline}]` });
    const tableOf = (fromFile: readonly TokenEntry[]) => createTokenTable([...auth.tokens, ...fromFile], origin);
    let table: TokenTable = tableOf(file ? readTokensFile(file) : []);
    const stop = file ? watchTokensFile(file, (entries) => (table = tableOf(entries)), { intervalMs: options.reloadIntervalMs, logger: ctx.logger }) : undefined;
    ctx.logger.info('authentication on', { tokens: table.size, tokensFile: file, mtlsTenantFrom: mtls?.tenantFrom, tls: tls !== undefined });
    return {
      name: 'auth',
      credentials,
      authenticate: createAuthenticator({ tokens: () => table, mtls }),
      async close() {
        stop?.();
      },
    };
  };
}

/** The auth plugin with its defaults. */
export const authPlugin: PluginFactory = createAuthPlugin();
