import { globAny } from './glob';
import { allHold } from './conditions';
import { removeAtPointer, setAtPointer } from './json-edit';
import type { PolicyRule } from './policy-types';

/** What the configured rules decide about one attempt. */
export type RulesVerdict =
  | { readonly action: 'block'; readonly reason: string; readonly by: string }
  | { readonly action: 'allow' | 'ask'; readonly reason: string; readonly args: unknown; readonly modified: boolean };

/**
 * Applies the rules in order to a call of `tool`. A matching modify rule changes (a copy of) the
 * arguments and evaluation goes on with them; the first matching allow, block or ask rule ends it.
 * No matching rule allows the call unchanged.
 */
export function evaluateRules(rules: readonly PolicyRule[], tool: string, args: unknown): RulesVerdict {
  let current = args;
  let modified = false;
  const reasons: string[] = [];
  for (const rule of rules) {
    if (!globAny(rule.match, tool) || !allHold(rule.when, current)) continue;
    if (rule.decide === 'block') return { action: 'block', reason: rule.reason, by: rule.label };
    if (rule.decide === 'modify') {
      if (!modified) current = structuredClone(current);
      modified = true;
      for (const [pointer, value] of rule.set) {
        if (!setAtPointer(current, pointer, structuredClone(value))) return { action: 'block', reason: `policy ${rule.label} could not set ${pointer} in the arguments`, by: rule.label };
      }
      for (const pointer of rule.remove) removeAtPointer(current, pointer);
      if (rule.reason) reasons.push(rule.reason);
      continue;
    }
    return { action: rule.decide, reason: rule.reason, args: current, modified };
  }
  return { action: 'allow', reason: reasons.join('; '), args: current, modified };
}
