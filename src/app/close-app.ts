import type { Logger } from '../log';
import { DEADLINES, settlesBefore, type PipelineDeps } from '../pipeline';
import type { Plugin } from './plugin';

/**
 * The longest the app's close takes after the drain, in ms. The Helm chart's
 * `dispatch.shutdownCloseSeconds` (7 s) covers it and the process's exit; test/helm checks it
 * against this. A step still running then is logged and left: the process exits without it.
 */
export const CLOSE_BUDGET_MS = 6_500;

/**
 * How long the plugins that may still end calls (executors, guards, ...) get to close before the
 * traces, the tool stats and the store's records are flushed, in ms: a call that ends then is
 * counted, traced and recorded. Past it the flushes start anyway; those plugins go on closing
 * alongside, within their own bounds and {@link CLOSE_BUDGET_MS}.
 */
export const FIRST_CLOSE_MS = 1_000;

/** The bounds of {@link closeApp}, shorter in tests. */
export interface CloseBounds {
  /** @default CLOSE_BUDGET_MS */
  readonly budgetMs?: number;
  /** @default FIRST_CLOSE_MS */
  readonly firstMs?: number;
}

/**
 * Waits for every one of `closing` (undefined ones skipped) to settle, then rejects with the first
 * failure, if any: a plugin's close that runs its parts together must not resolve, and let the
 * process exit, while one of them (the trace flush, say) is still at work.
 */
export async function allClosed(closing: readonly (Promise<unknown> | undefined | false | '')[]): Promise<void> {
  const results = await Promise.allSettled(closing);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/** A named closing step; its name is what the log says when it outlasts its deadline. */
interface Step {
  readonly name: string;
  readonly run: () => Promise<void>;
}

/** Starts `steps` together, each once; a step's name is in `running` until it settles. Never rejects. */
function start(steps: readonly Step[], running: Set<string>, logger: Logger): Promise<unknown> {
  return Promise.all(
    steps.map((step) => {
      running.add(step.name);
      return Promise.resolve()
        .then(step.run)
        .catch((error: unknown) => logger.warn('closing step failed', { step: step.name, error: error instanceof Error ? error.message : String(error) }))
        .finally(() => running.delete(step.name));
    }),
  );
}

/**
 * Closes the plugins, the store and the scratch directories within {@link CLOSE_BUDGET_MS}. Most
 * steps wait on the network (Redis, the trace collector), so they run together rather than one
 * after the other, in two rounds: first every plugin but the observer's, as they may end calls
 * still running (waited for at most {@link FIRST_CLOSE_MS}); then the observer's plugin (trace
 * flush, tool stats, event relay), the store (its pending records, then QUIT), the scratch
 * directories and the schema compiler's worker thread. Never rejects; what failed or was still running at the deadline is logged.
 */
export async function closeApp(plugins: readonly Plugin[], deps: Pick<PipelineDeps, 'store' | 'scratch'> & Partial<Pick<PipelineDeps, 'registry'>>, logger: Logger, bounds: CloseBounds = {}): Promise<void> {
  const { budgetMs = CLOSE_BUDGET_MS, firstMs = FIRST_CLOSE_MS } = bounds;
  const started = Date.now();
  const budget = started + budgetMs;
  const running = new Set<string>();
  const stepOf = (plugin: Plugin): Step => ({ name: `plugin ${plugin.name}`, run: () => plugin.close?.() ?? Promise.resolve() });
  const withClose = plugins.filter((p) => p.close !== undefined);
  const first = start(withClose.filter((p) => p.observer === undefined).map(stepOf), running, logger);
  await settlesBefore(first, Math.min(budget, started + firstMs));
  const lastSteps = [...withClose.filter((p) => p.observer !== undefined).map(stepOf), { name: 'store', run: () => deps.store.close() }, { name: 'scratch', run: () => deps.scratch.close() }, { name: 'schema compiler', run: () => deps.registry?.close() ?? Promise.resolve() }];
  const last = start(lastSteps, running, logger);
  if (!(await settlesBefore(Promise.all([first, last]), budget))) logger.warn('closing steps did not finish in time; stopping without them', { steps: [...running], budgetMs });
  DEADLINES.disarmIfIdle();
}
