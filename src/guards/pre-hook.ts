import type { HookDecision, PreHookInput } from '../pipeline';
import { globAny, rulesByTool } from './glob';
import type { EndpointAnswer, EndpointQuestion } from './policy-endpoint';
import { evaluateRules, type RulesVerdict } from './policy-rules';
import type { EndpointPolicy, PolicyRule } from './policy-types';

/** A pre-tool hook: decides Allow, Block(reason), Modify(arguments) or Ask about an attempt. */
export type PreHook = (input: PreHookInput) => HookDecision | Promise<HookDecision>;

/** What the combined pre-tool stage consults, in this order. */
export interface PreHookSources {
  readonly rules: readonly PolicyRule[];
  /** Hooks given in code, after the rules. */
  readonly hooks?: readonly PreHook[];
  readonly endpoint?: { readonly policy: EndpointPolicy; readonly ask: (question: EndpointQuestion) => Promise<EndpointAnswer> };
}

const ALLOW: HookDecision = { action: 'allow' };

/**
 * Step 2 of an attempt: the configured rules, then the hooks given in code, then the policy
 * endpoint, each seeing the arguments as the previous ones left them. The first Block wins
 * outright (a hook that throws blocks: policies fail closed); any Ask makes the attempt wait for approval (with the modified arguments); otherwise
 * a modification is a Modify, and nothing at all an Allow.
 */
export function createPreHook(sources: PreHookSources): PreHook {
  const hooks = sources.hooks ?? [];
  const endpoint = sources.endpoint;
  const rulesFor = rulesByTool(sources.rules);
  // The rules alone answer synchronously; hooks in code and the endpoint make it a promise.
  return (input) => {
    const rules = rulesFor(input.tool.name);
    if (rules.length === 0 && hooks.length === 0 && !endpoint) return ALLOW;
    const verdict = evaluateRules(rules, input.tool.name, input.args);
    if (verdict.action === 'block') return verdict;
    if (hooks.length > 0 || (endpoint && globAny(endpoint.policy.match, input.tool.name))) return consultHooks(input, verdict);
    if (verdict.action === 'ask') return { action: 'ask', reason: verdict.reason, arguments: verdict.modified ? verdict.args : undefined };
    if (verdict.modified) return { action: 'modify', arguments: verdict.args, reason: verdict.reason || undefined };
    return ALLOW;
  };

  async function consultHooks(input: PreHookInput, verdict: Exclude<RulesVerdict, { action: 'block' }>): Promise<HookDecision> {
    let args = verdict.args;
    let modified = verdict.modified;
    const asks = verdict.action === 'ask' ? [verdict.reason] : [];
    const notes = verdict.action === 'allow' && verdict.reason ? [verdict.reason] : [];
    // `by`: what a block says blocked it (events and spans: dispatch.policy).
    const take = (decision: HookDecision | EndpointAnswer, by: 'hook' | 'endpoint'): HookDecision | undefined => {
      switch (decision.action) {
        case 'block':
          return 'unavailable' in decision && decision.unavailable ? { action: 'block', reason: decision.reason, unavailable: true, by } : { action: 'block', reason: decision.reason, by };
        case 'modify':
          args = decision.arguments;
          modified = true;
          if (decision.reason) notes.push(decision.reason);
          return undefined;
        case 'ask':
          asks.push(decision.reason);
          if ('arguments' in decision && decision.arguments !== undefined) {
            args = decision.arguments;
            modified = true;
          }
          return undefined;
        default:
          return undefined;
      }
    };
    for (const hook of hooks) {
      let decision: HookDecision;
      try {
        decision = await hook(args === input.args ? input : withArgs(input, args));
      } catch (error) {
        return { action: 'block', reason: `a pre-tool hook failed (${(error as Error).message}), so the call was refused`, by: 'hook' };
      }
      const stop = take(decision, 'hook');
      if (stop) return stop;
    }
    if (endpoint && globAny(endpoint.policy.match, input.tool.name)) {
      const stop = take(await endpoint.ask({ tool: input.tool.name, args, sessionId: input.sessionId, tenant: input.tenant, signal: input.signal }), 'endpoint');
      if (stop) return stop;
    }
    if (asks.length > 0) return { action: 'ask', reason: asks.join('; '), arguments: modified ? args : undefined };
    if (modified) return { action: 'modify', arguments: args, reason: notes.join('; ') || undefined };
    return ALLOW;
  }
}

/** The input with modified arguments; its signal stays lazy (a spread would read it, or drop a prototype getter). */
function withArgs(input: PreHookInput, args: unknown): PreHookInput {
  return {
    tenant: input.tenant,
    sessionId: input.sessionId,
    tool: input.tool,
    attempt: input.attempt,
    args,
    get signal() {
      return input.signal;
    },
  };
}
