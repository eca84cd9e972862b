import { authConfigured } from '../auth';
import type { DaemonOptions } from '../cli/dispatchd-options';
import type { DispatchConfig } from '../config';
import type { Executor } from '../executors';
import { createLogger, type Logger } from '../log';
import { NOOP_OBSERVER, type Observer, type PipelineDeps } from '../pipeline';
import { allowAll, startServer, type Authenticator, type DispatchServer } from '../server';
import { closeApp } from './close-app';
import { createPipeline, type PipelineOptions } from './create-pipeline';
import type { AppEnvironment, Plugin, PluginFactory } from './plugin';
import { PLUGINS } from './plugins';

/** An assembled dispatch: the pipeline, and how to serve it and stop it. */
export interface App {
  readonly deps: PipelineDeps;
  listen(address: string): Promise<DispatchServer>;
  /**
   * Shuts the server (if listening) down, `graceMs` given to the calls in flight, then every plugin,
   * the store and the scratch directories, within CLOSE_BUDGET_MS (`close-app.ts`). Never rejects.
   */
  close(graceMs?: number): Promise<void>;
}

function single<K extends keyof Plugin>(plugins: readonly Plugin[], key: K): Plugin[K] | undefined {
  const providers = plugins.filter((p) => p[key] !== undefined);
  if (providers.length > 1) throw new Error(`plugins ${providers.map((p) => p.name).join(' and ')} both provide ${String(key)}`);
  return providers[0]?.[key];
}

/**
 * Builds dispatch from its configuration and every plugin (or the given ones, in tests). Without
 * authentication configured (see authConfigured) every caller is tenant `default`, so the plugins
 * and the pipeline get `config.singleTenantLimits`: per-tenant shares left out are whole limits.
 */
export async function buildApp(configured: DispatchConfig, options: Partial<DaemonOptions> & AppEnvironment & { logger?: Logger; pipeline?: Partial<PipelineOptions> } = {}, factories: readonly PluginFactory[] = PLUGINS): Promise<App> {
  const logger = options.logger ?? createLogger();
  let observer: Observer = NOOP_OBSERVER;
  let authenticate: Authenticator = allowAll;
  // The same environment as the auth plugin's (AppEnvironment), so both see the same tokens file.
  const singleTenant = !authConfigured(configured.auth, options.env ?? process.env, options.tls);
  const config = singleTenant ? { ...configured, limits: configured.singleTenantLimits ?? configured.limits } : configured;
  const ctx = { config, options, logger, singleTenant, observer: () => observer, authenticate: () => authenticate };
  const plugins: Plugin[] = [];
  let built: PipelineDeps | undefined;
  try {
    for (const factory of factories) plugins.push(await factory(ctx));
    observer = single(plugins, 'observer') ?? NOOP_OBSERVER;
    authenticate = single(plugins, 'authenticate') ?? allowAll;
    // A plugin of the embedder's authenticating callers the config does not name: its tenants share whole limits.
    if (singleTenant && authenticate !== allowAll) logger.warn('a plugin authenticates callers, but no authentication is configured: each per-tenant limit left out is the whole limit; set them in limits', {});
    const executors = new Map<string, Executor>(plugins.flatMap((p) => [...(p.executors ?? [])]));
    const deps = (built = createPipeline({
      config,
      logger,
      observer,
      store: single(plugins, 'store'),
      guards: single(plugins, 'guards'),
      middleware: plugins.flatMap((p) => p.middleware ?? []),
      executors,
      ...options.pipeline,
    }));
    for (const plugin of plugins) await plugin.attach?.(deps);
    let server: DispatchServer | undefined;
    let closing: Promise<void> | undefined;
    return {
      deps,
      async listen(address) {
        const handlers = { dispatch: {}, registry: {}, worker: {} };
        for (const p of plugins) for (const key of ['dispatch', 'registry', 'worker'] as const) Object.assign(handlers[key], p.handlers?.[key]);
        server = await startServer(address, {
          deps,
          authenticate,
          credentials: single(plugins, 'credentials'),
          parallel: single(plugins, 'parallel'),
          extraHandlers: handlers,
          singleTenant,
        });
        for (const plugin of plugins) await plugin.started?.(server);
        return server;
      },
      close(graceMs = 0) {
        // Once: a second close (a signal during an embedder's own) waits for the first, not closing twice.
        closing ??= (async () => {
          await server?.shutdown(graceMs);
          await closeApp(plugins, deps, logger);
        })();
        return closing;
      },
    };
  } catch (error) {
    // Once the pipeline exists, its store (the store plugin hands its Redis store over on attach),
    // scratch directories and schema compiler are the app's to close, as close() does, within its
    // budget: closing the plugins alone left the store's Redis connections open.
    if (built) await closeApp(plugins, built, logger);
    else for (const plugin of plugins.reverse()) await plugin.close?.().catch(() => undefined);
    throw error;
  }
}
