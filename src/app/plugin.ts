import type * as grpc from '@grpc/grpc-js';
import type { DaemonOptions } from '../cli/dispatchd-options';

/** Where the app reads its environment variables (DISPATCH_AUTH_TOKENS_FILE among them). */
export interface AppEnvironment {
  /** @default process.env */
  readonly env?: NodeJS.ProcessEnv;
}
import type { DispatchConfig } from '../config';
import type { Executor } from '../executors';
import type { Logger } from '../log';
import type { Guards, Middleware, Observer, PipelineDeps } from '../pipeline';
import type { Authenticator, DispatchServer, ExtraHandlers, ParallelDispatcher } from '../server';
import type { Store } from '../store';

/** What every plugin is given when the app is assembled. */
export interface PluginContext {
  readonly config: DispatchConfig;
  readonly options: Partial<DaemonOptions> & AppEnvironment;
  readonly logger: Logger;
  /**
   * No authentication is configured: every caller is tenant `default`, and per-tenant shares left
   * out of the config are whole limits (`config.limits` already holds them). @default false
   */
  readonly singleTenant?: boolean;
  /** The assembled observer; valid once the app is built (late-bound, safe to call from callbacks). */
  observer(): Observer;
  /**
   * The server's authenticator (the auth plugin's, else allowAll); late-bound like `observer()`:
   * call it at request time, e.g. `ctx.authenticate()(call, 'subscribe')`.
   */
  authenticate(): Authenticator;
}

/**
 * A part of dispatch that adds to the pipeline or the server. Every field is optional; the app
 * merges them: executors and handlers by name, middleware in plugin order, and at most one
 * plugin providing each of store, guards, observer, parallel, authenticate and credentials.
 */
export interface Plugin {
  readonly name: string;
  readonly store?: Store;
  readonly executors?: ReadonlyMap<string, Executor>;
  readonly middleware?: readonly Middleware[];
  readonly guards?: Guards;
  readonly observer?: Observer;
  readonly parallel?: ParallelDispatcher;
  readonly authenticate?: Authenticator;
  readonly credentials?: grpc.ServerCredentials;
  readonly handlers?: ExtraHandlers;
  /** Called once the pipeline exists (the registry, the store, ...). */
  attach?(deps: PipelineDeps): void | Promise<void>;
  /** Called once the server listens. */
  started?(server: DispatchServer): void | Promise<void>;
  close?(): Promise<void>;
}

/** Creates a plugin from the context. */
export type PluginFactory = (ctx: PluginContext) => Promise<Plugin>;
