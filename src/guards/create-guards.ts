import { createLogger, type Logger } from '../log';
import { NOOP_OBSERVER, parseBreakerKey, type Guards, type Observer, type Reflector } from '../pipeline';
import { createApprovals, MAX_PENDING_APPROVALS, type Approvals } from './approvals';
import { DEFAULT_BREAKER_SETTINGS, type BreakerSettings } from './breaker-settings';
import { createBreakers, type Breakers } from './breakers';
import { globAny } from './glob';
import { createPolicyEndpoint } from './policy-endpoint';
import { EMPTY_POLICIES, type PolicyConfig } from './policy-types';
import { createPostHook, type PostHook } from './post-hook';
import { createPreHook, type PreHook } from './pre-hook';
import { createRecoveryReflector, type ArgumentFixer } from './recovery-reflector';
import { createSessionBudgets } from './session-budgets';
import { createToolSlots, type SharedSlotsOptions } from './tool-slots';
import { createToolRates } from './tool-rates';

/** Options of {@link createGuards}; every field has a default. */
export interface GuardsOptions {
  /** The checked `policies:` section. @default none */
  readonly policies?: PolicyConfig;
  /** Time an Ask waits for ResolveApproval, in ms. @default 120000 */
  readonly approvalTimeoutMs?: number;
  /**
   * No authentication is configured: every call is tenant `default`, so a per-tenant share (the
   * approvals waiting) is the whole bound, as for the limits (build-app's singleTenant). @default false
   */
  readonly singleTenant?: boolean;
  /** The observer told of breaker state changes (late-bound). @default no observer */
  readonly observer?: () => Observer;
  readonly logger?: Logger;
  /** Pre-tool hooks given in code, run after the configured rules. */
  readonly preHooks?: readonly PreHook[];
  /** Post-tool hooks given in code, run after the configured `after:` rules. */
  readonly postHooks?: readonly PostHook[];
  /** Proposes fixed arguments for a failure (used by the default reflector). */
  readonly fixArguments?: ArgumentFixer;
  /** Replaces the default reflector (retry tree, fallback tool, fixed arguments). */
  readonly reflector?: Reflector;
  /** Breaker settings of tools no `breaker:` policy matches. @default DEFAULT_BREAKER_SETTINGS */
  readonly breakerDefaults?: BreakerSettings;
  /** Where `shared: true` concurrency caps and rate limits keep their state (Redis); without it they are each replica's own. */
  readonly sharedSlots?: SharedSlotsOptions;
}

/** The pipeline's guards and the parts other components read (breaker stats, approvals). */
export interface GuardSet {
  readonly guards: Guards;
  readonly breakers: Breakers;
  readonly approvals: Approvals;
  close(): void;
}

/** Assembles hooks and policies, breakers, the approvals registry and recovery. */
export function createGuards(options: GuardsOptions = {}): GuardSet {
  const policies = options.policies ?? EMPTY_POLICIES;
  const logger = options.logger ?? createLogger();
  const observer = options.observer ?? (() => NOOP_OBSERVER);
  const breakerDefaults = options.breakerDefaults ?? DEFAULT_BREAKER_SETTINGS;
  const breakers = createBreakers({
    settingsFor: (key) => {
      const { tool } = parseBreakerKey(key);
      return policies.breakers.find((b) => globAny(b.match, tool))?.settings ?? breakerDefaults;
    },
    onState: (tool, state) => {
      // An opening is what an on-call filter on warn must see; the key names the tenant of a tool a tenant registered.
      const { tenant, tool: name } = parseBreakerKey(tool);
      (state === 'open' ? logger.warn : logger.info).call(logger, 'breaker state changed', { tool: name, ...(tenant === '' ? {} : { tenant }), state });
      try {
        observer().breakerState(tool, state);
      } catch (error) {
        logger.warn('observer failed on a breaker state change', { tool, error: (error as Error).message });
      }
    },
  });
  const approvals = createApprovals({ timeoutMs: options.approvalTimeoutMs, maxPendingPerTenant: options.singleTenant ? MAX_PENDING_APPROVALS : undefined });
  const endpoint = policies.endpoint ? { policy: policies.endpoint, ask: createPolicyEndpoint(policies.endpoint, logger) } : undefined;
  const guards: Guards = {
    preHook: createPreHook({ rules: policies.rules, hooks: options.preHooks, endpoint }),
    postHook: createPostHook(policies.after, options.postHooks ?? [], logger),
    breaker: breakers.gate,
    reflector: options.reflector ?? createRecoveryReflector({ fixArguments: options.fixArguments }),
    awaitApproval: (approvalId, signal, tenant, waiting, request, decided) => approvals.wait(approvalId, signal, tenant, waiting, request, decided),
    slots: createToolSlots(policies.concurrency, options.sharedSlots),
    rates: createToolRates(policies.rates, options.sharedSlots),
    budgets: createSessionBudgets(policies.budgets),
  };
  return {
    guards,
    breakers,
    approvals,
    close() {
      approvals.close();
      breakers.close();
    },
  };
}
