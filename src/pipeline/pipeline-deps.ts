import type { SessionScope } from '../store';
import type { ExecutorSet } from '../executors';
import type { Logger } from '../log';
import type { Limits } from '../options';
import type { ToolRegistry } from '../registry';
import type { ScratchDirs } from '../session';
import type { Store } from '../store';
import type { Guards } from './guards';
import type { ToolHandler } from './middleware';
import type { TurnSignal } from './signals';
import type { Observer, TurnObserver } from './observer';

/** Everything the pipeline needs, built once per server. */
export interface PipelineDeps {
  readonly registry: ToolRegistry;
  readonly store: Store;
  readonly executors: ExecutorSet;
  /** The executor core wrapped in the middleware chain. */
  readonly handler: ToolHandler;
  readonly guards: Guards;
  readonly observer: Observer;
  readonly limits: Limits;
  readonly scratch: ScratchDirs;
  readonly logger: Logger;
}

/** One Dispatch RPC, as every call of it sees it. */
export interface TurnContext {
  readonly tenant: string;
  readonly sessionId: string;
  readonly turn: number;
  /** Fires on the client's cancel, the RPC deadline and shutdown (an AbortSignal will do). */
  readonly signal: TurnSignal;
  /** Epoch ms of the RPC deadline, or Infinity. */
  readonly deadline: number;
  /** Epoch ms when the request was received: the deadline's slack is a share of the time between. */
  readonly received?: number;
  /**
   * Fires when dispatchd begins to drain: from then no attempt starts (a sequential turn's next
   * call, a parallel turn's next call or wave, a retry, whose backoff it ends), an attempt waiting
   * before its tool runs (an approval, a slot, a rate turn: see waitSignal) stops waiting and
   * throws SHUTTING_DOWN, attempts running go on until `shutdown`, and a turn with calls left ends
   * SHUTTING_DOWN (clients retry it).
   */
  readonly draining?: TurnSignal;
  /**
   * Fires when dispatchd's drain grace period ends: a cancellation after it is shutdown's
   * (SHUTTING_DOWN), not the client's (see turnError).
   */
  readonly shutdown?: TurnSignal;
  readonly offeredTools?: ReadonlySet<string>;
  readonly interactive: boolean;
  readonly observer: TurnObserver;
  readonly traceparent?: string;
  /** The caller's `tracestate` metadata (W3C Trace Context), at most 512 characters: passed on to HTTP and MCP tools. */
  readonly tracestate?: string;
  /** `{ tenant, sessionId }`, made once for the turn's store steps (made per attempt when absent). */
  readonly scope?: SessionScope;
  /** A parallel turn's resources: each attempt holds the one its arguments name while it runs. */
  readonly resources?: ResourceHolds;
  /**
   * The loop ops a call of this turn was told to call again later for (shared by the turn's waves):
   * another call of the op in the turn was sent before that answer, so it is not early (loop-block.ts).
   * Made at the first wait told when absent (a copy of the turn makes its own: share one made before).
   */
  toldWaits?: Set<string>;
}

/** Gives up a resource an attempt held. */
export type Release = () => void;

/**
 * The resources the calls of one turn run on (DESIGN section 3: calls on one resource key never
 * overlap). The planner separates calls by the key in the arguments the model sent; a policy or
 * hook may rewrite them onto another call's resource, so an attempt also holds the key of the
 * arguments it runs with.
 */
export interface ResourceHolds {
  /**
   * Holds the resource that `pointer` (a tool's `resource_key`) names in `args`: undefined when it
   * names none, the release when it is free, else a promise of the release once the calls ahead
   * have released it, rejected with CANCELLED when `signal` fires first. `claimKey`, when given
   * (a side-effecting attempt's idempotency key), is held too, after the resource: a policy may
   * make two calls of one wave one call, which must run one after the other as in sequential mode.
   */
  hold(pointer: string, args: unknown, signal: TurnSignal, claimKey?: string): Release | undefined | Promise<Release>;
}
