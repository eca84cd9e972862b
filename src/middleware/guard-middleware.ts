import type { Middleware } from '../pipeline';
import { createMemoCache, type MemoCache, type MemoCacheOptions } from './memo-cache';
import { memoize } from './memoize';
import { redaction } from './redaction';
import type { RedactionOptions } from './redact-secrets';
import { createRedactionWorker, type RedactionWorkerOptions } from './redaction-worker';
import { resultVerification } from './result-verification';

/** A middleware with the name tests and logs know it by. */
export interface NamedMiddleware {
  readonly name: 'redaction' | 'result_verification' | 'memoize';
  readonly middleware: Middleware;
}

/** Options of {@link createGuardMiddleware}. */
export interface GuardMiddlewareOptions {
  readonly redaction?: RedactionOptions;
  /** The thread that redacts large outputs off the event loop (redaction-worker.ts). */
  readonly redactionWorker?: RedactionWorkerOptions;
  readonly memoize?: MemoCacheOptions;
}

/** The guard middleware and the memo cache behind it. */
export interface GuardMiddleware {
  /** In registration order, first outermost (DESIGN section 3 step 6). */
  readonly stages: readonly NamedMiddleware[];
  readonly cache: MemoCache;
  /**
   * Sets where memoize tells each resource a side-effecting call wrote (a store replicas share
   * announces it to the others, whose caches then drop their reads of it).
   */
  announceWrites(announce: (resource: string) => void): void;
  /** Ends the redaction worker's thread (the app closing): outputs waiting for it fail, unredacted text never passes. */
  close(): Promise<void>;
}

/**
 * Redaction, result verification and memoize, in that order: redaction sees the output last, so
 * nothing cached or verified escapes it; verification checks cached outputs too. The output cap
 * is added innermost by the pipeline.
 */
export function createGuardMiddleware(options: GuardMiddlewareOptions = {}): GuardMiddleware {
  const cache = createMemoCache(options.memoize);
  const worker = createRedactionWorker(options.redaction, options.redactionWorker);
  let announce: ((resource: string) => void) | undefined;
  return {
    cache,
    announceWrites: (to) => void (announce = to),
    close: () => worker.close(),
    stages: [
      { name: 'redaction', middleware: redaction(options.redaction, worker) },
      { name: 'result_verification', middleware: resultVerification() },
      { name: 'memoize', middleware: memoize(cache, (resource) => announce?.(resource)) },
    ],
  };
}
