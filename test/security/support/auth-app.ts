import * as grpc from '@grpc/grpc-js';
import { buildApp, type App } from '../../../src/app';
import { authPlugin, createAuthPlugin, type AuthPluginOptions } from '../../../src/app/plugins/auth-plugin';
import { PLUGINS } from '../../../src/app/plugins';
import { sha256Hex } from '../../../src/auth';
import type { DaemonOptions } from '../../../src/cli/dispatchd-options';
import type { createDispatchClient, createRegistryClient, CallOptions } from '../../../src/client';
import { serveApp } from '../../helpers/servers';
import { parseConfig } from '../../../src/config';
import { SILENT_LOGGER, type Logger } from '../../../src/log';

/** A token a test hands out, with what it grants. */
export interface TestToken {
  readonly token: string;
  readonly tenant: string;
  readonly scopes: readonly string[];
}

/** The YAML entries of tokens, as the config and tokens files hold them (digests only). */
export function tokenEntriesYaml(tokens: readonly TestToken[], indent = ''): string {
  return tokens.map((t) => `${indent}- tenant: ${t.tenant}\n${indent}  scopes: [${t.scopes.join(', ')}]\n${indent}  sha256: ${sha256Hex(t.token)}\n`).join('');
}

/** An `auth:` section with inline tokens. */
export const authYaml = (tokens: readonly TestToken[]) => `auth:\n  tokens:\n${tokenEntriesYaml(tokens, '    ')}`;

/** Call options carrying a bearer token. */
export const bearer = (token: string, extra: Omit<CallOptions, 'metadata'> = {}): CallOptions => ({ ...extra, metadata: { authorization: `Bearer ${token}` } });

/** The gRPC status code of a rejected promise. */
export async function codeOf(promise: Promise<unknown>): Promise<grpc.status | 'ok'> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    return (error as grpc.ServiceError).code;
  }
}

/** A rejection's status code and details. */
export async function statusOf(promise: Promise<unknown>): Promise<{ code: grpc.status | 'ok'; details: string }> {
  try {
    await promise;
    return { code: 'ok', details: '' };
  } catch (error) {
    return { code: (error as grpc.ServiceError).code, details: (error as grpc.ServiceError).details };
  }
}

/** A full app (every plugin, the auth plugin with `auth` options) listening on 127.0.0.1:0. */
export interface AuthApp {
  readonly app: App;
  readonly port: number;
  readonly address: string;
  readonly dispatch: ReturnType<typeof createDispatchClient>;
  readonly registry: ReturnType<typeof createRegistryClient>;
  close(): Promise<void>;
}

/** Starts the whole app from config text; the clients use `credentials` (insecure unless given). */
export async function startAuthApp(
  yaml: string,
  options: { auth?: AuthPluginOptions; daemon?: Partial<DaemonOptions>; logger?: Logger; credentials?: grpc.ChannelCredentials; configFile?: string } = {},
): Promise<AuthApp> {
  const config = parseConfig(yaml, options.configFile ?? 'test.yaml');
  const env = options.auth?.env ?? {};
  const factories = PLUGINS.map((f) => (f === authPlugin ? createAuthPlugin({ ...options.auth, env }) : f));
  // The app reads the same environment, so it sees the tokens file the plugin does (its limits per tenant).
  const app = await buildApp(config, { logger: options.logger ?? SILENT_LOGGER, env, ...options.daemon }, factories);
  const served = await serveApp(app, options.credentials);
  return { ...served, port: served.server.port };
}
