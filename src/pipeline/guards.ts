import type { SessionBudget, SessionScope } from '../store';
import type { DispatchError } from '../errors';
import type { ResolvedTool } from '../registry';
import type { ToolOutput } from './middleware';
import type { ApprovalDecision, ApprovalRequest } from './approval-request';
import type { Release } from './pipeline-deps';
import type { TurnSignal } from './signals';

/** What a pre-tool hook or policy decides about an attempt. */
export type HookDecision =
  | { readonly action: 'allow' }
  /**
   * `unavailable`: what decides could not be consulted for now (the policy endpoint unreachable,
   * timed out, busy): refused UNAVAILABLE, recoverable, not BLOCKED, and not a refusal loop
   * detection counts (the same call may pass once it answers). `by`: what blocked it, for events
   * and spans (a rule's name or `policies[i]`, `endpoint`, `hook`).
   */
  | { readonly action: 'block'; readonly reason: string; readonly unavailable?: true; readonly by?: string }
  | { readonly action: 'modify'; readonly arguments: unknown; readonly reason?: string }
  | {
      readonly action: 'ask';
      readonly reason: string;
      /** Arguments to run with once approved, when a policy also modified them. */
      readonly arguments?: unknown;
    };

/** What a pre-tool hook sees. */
export interface PreHookInput {
  readonly tenant: string;
  readonly sessionId: string;
  readonly tool: ResolvedTool;
  readonly args: unknown;
  readonly attempt: number;
  readonly signal: AbortSignal;
}

/** What a post-tool hook sees; it may return annotations added to the result's warnings. */
export interface PostHookInput extends Omit<PreHookInput, 'signal'> {
  readonly output: string;
  readonly isError: boolean;
}

/**
 * What a breaker gave an attempt it admitted, handed back with the outcome: whether the attempt is
 * the half-open probe, and the breaker's generation at admission (bumped on each state change,
 * and each probe taken or given back).
 */
export interface BreakerTicket {
  readonly probe: boolean;
  readonly generation: number;
}

/** The breaker of every tool: a pure read, a gate that may take the half-open probe, a record. */
export interface BreakerGate {
  /** True when the tool's breaker is open (no side effect). */
  isOpen(tool: string): boolean;
  /**
   * While the tool's breaker refuses calls, about how long until it may let one through (its
   * half-open time, or its probe's timeout); undefined when it does not refuse, or cannot tell.
   */
  retryAfterMs?(tool: string): number | undefined;
  /**
   * Admits an attempt, taking the single half-open probe when it is free (held for at least
   * `timeoutMs`, the tool's timeout): the ticket to record its outcome with, or undefined if refused.
   */
  tryAcquire(tool: string, timeoutMs: number): BreakerTicket | undefined;
  /**
   * Records an attempt's outcome under the resolved tool name: `ok` for a success; `counts` when the
   * outcome says something about the tool's health (a success, or a failure of DESIGN section 8's
   * list). It is judged by the state `ticket` was given in: an attempt admitted before the last
   * state change only counts in the window, and an outcome that does not count only frees the
   * probe slot, when the attempt is the current probe.
   */
  record(tool: string, ticket: BreakerTicket, outcome: { readonly ok: boolean; readonly counts: boolean; readonly noHost?: boolean; readonly durationMs: number }): void;
  /**
   * The tool (its breaker key) has a new chance: a worker hosting it connected, here or to another
   * replica. Its breaker, if open, half-opens now (ToolBreaker.halfOpenNow); with `onlyIfNoHost`
   * (a host told again, not a new one), only if the failure that opened it found no host.
   */
  halfOpen?(tool: string, onlyIfNoHost?: boolean): void;
  /**
   * The tools (breaker keys) whose breakers are open now: a replica that may have missed a worker's
   * connection (its subscription dropped) asks which of them to half-open.
   */
  openTools?(): string[];
}

/** What the caps know of a tool: whose it is, its name, and its timeout (a shared slot's lease). */
export interface SlotTool {
  readonly tenant: string;
  readonly name: string;
  readonly timeoutMs: number;
  /**
   * The tool's `loop.assumed_wait_ms`: the wait a cap's refusal tells (`retry_after_ms`), as every
   * failure asking to be called again later without knowing when. @default TOOL_DEFAULTS.assumedWaitMs
   */
  readonly loop?: { readonly assumedWaitMs: number };
}

/**
 * Caps on how many attempts of a tool run at once on this replica (`concurrency:` policies). An
 * attempt takes a slot after its pre-tool hooks and before any store step, and gives it back
 * when it ends.
 */
export interface ToolSlots {
  /**
   * A slot for an attempt of `tool`: undefined when no cap applies; the release when one is free;
   * else a promise of it, resolved when an attempt ahead gives one back (first come, first
   * served), rejected with UNAVAILABLE (before) when none came within the cap's wait and before
   * `deadline` (epoch ms), or with CANCELLED when `signal` fires first. Throws the UNAVAILABLE at
   * once when the cap allows no wait. `holdMs`: how long the attempt may hold the slot before its
   * tool starts (its longest rate wait), which a shared slot's lease covers beyond the tool's timeout.
   * `caller`: the calling tenant, whose share of the slots a cap's `max_in_flight_per_tenant`
   * bounds (the tool's own tenant when not given).
   */
  take(tool: SlotTool, signal: TurnSignal, deadline: number, holdMs?: number, caller?: string): Release | undefined | Promise<Release>;
  /** Slots this replica holds now (shared ones too), by breaker key (`tool`, or `tenant/tool`), of the capped tools that took one since the start (0 once idle). */
  inUse(): ReadonlyMap<string, number>;
  /** Attempts refused for want of a slot since the start, by breaker key (every capped tool refused at least once). */
  refused(): ReadonlyMap<string, number>;
}

/** Rate limits: when each attempt of a limited tool may start. */
export interface ToolRates {
  /**
   * The turn of an attempt of `tool` under its rate limit: undefined when it may start now (or no
   * limit applies), else a promise resolved when its turn comes. Throws (or rejects) UNAVAILABLE
   * before execution, with `retryAfterMs`, when its turn is further away than the limit's wait
   * and `deadline` (epoch ms) allow; rejects CANCELLED when `signal` fires first. `caller`: the
   * calling tenant, whose own limit a `per_tenant` limit is (the tool's own tenant when not given).
   */
  take(tool: SlotTool, signal: TurnSignal, deadline: number, caller?: string): undefined | Promise<void>;
  /** The longest an attempt of `tool` may wait for its turn (0 when no limit applies), in ms. */
  longestWait(tool: SlotTool, deadline: number): number;
  /** Attempts refused so far, by breaker key. */
  refused(): ReadonlyMap<string, number>;
}

/** A correction proposed by a reflector: fixed arguments or a fallback tool. */
export interface Correction {
  readonly arguments?: unknown;
  readonly tool?: string;
  readonly note?: string;
}

/** What recovery decides after a failed attempt; a `warning` of a decision not to retry is added to the result. */
export type Reflection =
  | { readonly retry: true; readonly delayMs: number; readonly reason: string; readonly correction?: Correction }
  | { readonly retry: false; readonly reason: string; readonly warning?: string };

/** What a reflector sees of a failure. */
export interface Failure {
  readonly tool: ResolvedTool;
  readonly args: unknown;
  readonly error: DispatchError;
  /** The attempt that failed, counting from 1. */
  readonly attempt: number;
  /** Attempts of the call so far, across corrections. */
  readonly attemptsSoFar: number;
}

/** Classifies a failure and decides whether and how to try again. */
export interface Reflector {
  reflect(failure: Failure): Reflection | Promise<Reflection>;
}

/** The guard stages of the pipeline; each has a default that lets everything through. */
export interface Guards {
  /** May answer synchronously: the pipeline awaits only a promise. */
  readonly preHook: (input: PreHookInput) => HookDecision | Promise<HookDecision>;
  /** May answer synchronously; a rejection or a throw adds no notes. */
  readonly postHook: (input: PostHookInput) => readonly string[] | Promise<readonly string[]>;
  readonly breaker: BreakerGate;
  readonly reflector: Reflector;
  /**
   * Waits for ResolveApproval of an Ask by the same tenant; resolves true when approved. `waiting`
   * runs once the wait is taken: not when it is refused at once (too many waiting). `request` is
   * what ListApprovals shows of it. `decided` hears how a wait that was taken ended (approved, denied
   * with the approver's reason, expired or cancelled), before it resolves.
   */
  readonly awaitApproval: (approvalId: string, signal: AbortSignal, tenant?: string, waiting?: () => void, request?: ApprovalRequest, decided?: (decision: ApprovalDecision) => void) => Promise<boolean>;
  /** Concurrency caps per tool; absent when no tool has one. */
  readonly slots?: ToolSlots;
  /** Rate limits (`rate:` policies); undefined when there are none. */
  readonly rates?: ToolRates;
  /** Session budgets (`budget:` policies); undefined when there are none. */
  readonly budgets?: SessionBudgets;
  /** The memo cache, when memoize runs: a read it answers takes no slot and no rate turn. */
  readonly memo?: MemoPeek;
}

/** The memo cache as the pipeline sees it (see MemoCache). */
export interface MemoPeek {
  /**
   * The output memoize would serve now for a call's local key, if any, with the resource it read
   * and its session's tenant; a pure read (one Map lookup).
   */
  peek(localKey: string): (ToolOutput & { readonly resource?: string; readonly tenant?: string }) | undefined;
  /** The write generation of a resource. */
  generation(resource: string): number;
  /** How many sessions ended so far; of `tenant`'s, a count that only their ends change. */
  sessionEnds(tenant?: string): number;
}

/** The session budgets a pipeline counts calls against (see createSessionBudgets). */
export interface SessionBudgets {
  /** The budget a call of `tool` counts against; undefined when none applies. */
  of(tool: SlotTool): SessionBudget | undefined;
  /** Notes the calls the store says the session has `left` after counting one. */
  counted(scope: SessionScope, budget: SessionBudget, left: number): void;
  /** Counts a call on this replica while the store is unreachable: the calls left after it, or -1 past the budget (not counted). */
  countHere(scope: SessionScope, budget: SessionBudget): number;
  /** Notes a call's count given back (Store.giveBackBudget): the session has one call more left. */
  givenBack(scope: SessionScope, budget: SessionBudget): void;
}

const ALLOW: HookDecision = { action: 'allow' };
const NO_NOTES: readonly string[] = [];

const ADMITTED: BreakerTicket = Object.freeze({ probe: false, generation: 0 });

/** A breaker that never opens. */
export const OPEN_GATE: BreakerGate = { isOpen: () => false, tryAcquire: () => ADMITTED, record() {} };

/** Default guards: allow everything, never open, reflect with `reflector`, deny approvals. */
export function defaultGuards(reflector: Reflector): Guards {
  return {
    preHook: () => ALLOW,
    postHook: () => NO_NOTES,
    breaker: OPEN_GATE,
    reflector,
    awaitApproval: async () => false,
  };
}
