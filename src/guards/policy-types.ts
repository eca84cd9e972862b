import type { BreakerSettings } from './breaker-settings';

/** A comparison of a condition. */
export type ConditionOp = '=' | '!=' | '>' | '>=' | '<' | '<=' | 'in' | 'exists' | 'matches';

/** The operators, in the order the documentation lists them. */
export const CONDITION_OPS: readonly ConditionOp[] = ['=', '!=', '>', '>=', '<', '<=', 'in', 'exists', 'matches'];

/** A test of one value of the arguments, found by JSON pointer. */
export interface Condition {
  readonly pointer: string;
  readonly op: ConditionOp;
  readonly value: unknown;
}

/** What a rule decides. */
export type RuleDecision = 'allow' | 'block' | 'ask' | 'modify';

/** A pre-tool rule: tool-name globs, conditions that must all hold, and a decision. */
export interface PolicyRule {
  /** `policies[i]`, or the rule's `name`, for logs. */
  readonly label: string;
  readonly match: readonly string[];
  readonly when: readonly Condition[];
  readonly decide: RuleDecision;
  readonly reason: string;
  /** Values written at JSON pointers (modify). */
  readonly set: readonly (readonly [pointer: string, value: unknown])[];
  /** JSON pointers removed (modify). */
  readonly remove: readonly string[];
}

/** The external policy endpoint asked before each call of a matching tool. */
export interface EndpointPolicy {
  readonly url: string;
  readonly match: readonly string[];
  /** Time the endpoint may take, in ms. @default 2000 */
  readonly timeoutMs: number;
  /** Allow the call when the endpoint fails or times out, instead of blocking it. @default false */
  readonly failOpen: boolean;
  readonly headers: Readonly<Record<string, string>>;
}

/** Breaker settings for the tools a glob matches. */
export interface BreakerPolicy {
  readonly match: readonly string[];
  readonly settings: BreakerSettings;
}

/** A cap on the attempts of the matching tools that run at once on one replica. */
export interface ConcurrencyPolicy {
  readonly match: readonly string[];
  /** Attempts of one tool running at once, per replica (all tenants together). */
  readonly maxInFlight: number;
  /**
   * Attempts of one tool one calling tenant may run at once (`max_in_flight_per_tenant`, at most
   * `maxInFlight`), so that one tenant's burst never takes every slot. @default none: any tenant may take every slot
   */
  readonly maxInFlightPerTenant?: number;
  /** How long an attempt may wait for a slot before it is refused, in ms; 0 refuses at once. @default 0 */
  readonly waitMs: number;
  /**
   * Whether the slots are shared by every replica through Redis (with a Redis URL; each replica's
   * own otherwise, and while Redis is unreachable). @default false
   */
  readonly shared: boolean;
  /** A shared cap's per-replica cap while Redis fails (each replica's own slots). @default maxInFlight */
  readonly fallbackMaxInFlight: number;
  /** A shared cap refuses every attempt while Redis fails, instead of falling back to per-replica slots. @default false */
  readonly failClosed: boolean;
}

/** A limit on how often attempts of the matching tools start (a token bucket, kept as GCRA). */
export interface RatePolicy {
  readonly match: readonly string[];
  /** Attempts started per second, on average (`per_second`, or `per_minute` / 60). */
  readonly perSecond: number;
  /** Attempts that may start at once after a quiet spell. @default one second's worth, at least 1 */
  readonly burst: number;
  /** How long an attempt may wait for its turn before it is refused, in ms; 0 refuses at once. @default 0 */
  readonly waitMs: number;
  /** Whether every replica shares the limit through Redis (each replica's own otherwise, and while Redis fails). @default false */
  readonly shared: boolean;
  /** Whether each calling tenant has a limit of its own for the tool (`per_tenant`), not one for all tenants together. @default false */
  readonly perTenant?: boolean;
  /** How the limit was written, for messages: "10 calls per second", "30 calls per minute". */
  readonly text: string;
}

/** A budget of calls of the matching tools per session. */
export interface BudgetPolicy {
  readonly match: readonly string[];
  /** Calls of the matching tools, all together, that one session may make. */
  readonly maxCalls: number;
}

/** A post-tool rule: a warning added to the result of matching tools. */
export interface AfterRule {
  readonly match: readonly string[];
  /** Which results it annotates. @default 'any' */
  readonly on: 'error' | 'success' | 'any';
  /** Only outputs containing this text, when set. */
  readonly contains?: string;
  readonly warn: string;
}

/** The `policies:` section of the configuration, checked. */
export interface PolicyConfig {
  readonly rules: readonly PolicyRule[];
  readonly endpoint?: EndpointPolicy;
  readonly breakers: readonly BreakerPolicy[];
  readonly after: readonly AfterRule[];
  /** Concurrency caps; the first entry matching a tool applies. */
  readonly concurrency: readonly ConcurrencyPolicy[];
  /** Rate limits; the first entry matching a tool applies. */
  readonly rates: readonly RatePolicy[];
  /** Session budgets; the first entry matching a tool applies. */
  readonly budgets: readonly BudgetPolicy[];
}

/** No policies at all. */
export const EMPTY_POLICIES: PolicyConfig = Object.freeze({ rules: [], breakers: [], after: [], concurrency: [], rates: [], budgets: [] });
