import type { ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import { globAny } from './glob';
import { CHECKED_BEFORE, isRecord, parseMatch } from './parse-rule';
import type { StartupWarning } from './startup-warnings';

/** The kinds of entry of which the first fitting a tool applies to it (a rule: one that decides whatever the arguments). */
const FIRST_WINS = ['decide', 'budget', 'concurrency', 'rate', 'breaker'] as const;

/**
 * Whether the entry, of `kind`, applies to every call of a tool it fits, so that no later entry of
 * its kind ever applies to that tool: a budget, a cap, a rate or a breaker; a rule without `when`
 * that decides (block, allow, ask: a modify rule lets the later rules run).
 */
const alwaysApplies = (entry: Record<string, unknown>, kind: (typeof FIRST_WINS)[number]) =>
  kind !== 'decide' || ((entry.when === undefined || (Array.isArray(entry.when) && entry.when.length === 0)) && entry.decide !== 'modify');

/** `policies[i]`, with its name when it has one. */
const labelOf = (entry: Record<string, unknown>, index: number) => (typeof entry.name === 'string' ? `policies[${index}] (${entry.name})` : `policies[${index}]`);

/**
 * The entries of `policies:` that apply to none of the config file's tools they fit, because for
 * each of those an earlier entry of the same kind always applies first (the first fitting entry
 * wins: docs/policies.md): a tighter budget for `delete_row` after one for `delete_*`, or a block
 * after an allow of the same tool, loaded without a word and never took effect. Only warnings: a
 * tool registered later may be fitted by the later entry alone.
 */
export function shadowedPolicyWarnings(policies: readonly unknown[], tools: readonly ToolSpec[]): StartupWarning[] {
  const names = tools.map((tool) => tool.name);
  const warnings: StartupWarning[] = [];
  // Per kind, the entries seen so far that always apply, with their globs.
  const earlier = new Map<string, Array<{ readonly index: number; readonly label: string; readonly match: readonly string[] }>>();
  policies.forEach((entry, index) => {
    if (!isRecord(entry)) return;
    const kind = FIRST_WINS.find((k) => entry[k] !== undefined);
    if (kind === undefined) return;
    const match = parseMatch(entry.match, CHECKED_BEFORE);
    const before = earlier.get(kind) ?? [];
    const fitted = names.filter((name) => globAny(match, name));
    const winners = fitted.map((name) => before.find((b) => globAny(b.match, name)));
    if (fitted.length > 0 && winners.every((w) => w !== undefined)) {
      const by = [...new Set(winners.map((w) => w!.label))];
      const shown = fitted.length > 5 ? `${fitted.slice(0, 5).join(', ')} and ${fitted.length - 5} more` : fitted.join(', ');
      warnings.push({
        message: `${labelOf(entry, index)}: this ${kind} entry never applies to the config file's tools it fits (${shown}): ${by.join(' and ')} before it fit${by.length === 1 ? 's' : ''} them too, and the first ${kind} entry fitting a tool applies; put the narrower entry first`,
        fields: { policy: index, kind, shadowedBy: [...new Set(winners.map((w) => w!.index))], tools: fitted.slice(0, 20) },
      });
    }
    if (alwaysApplies(entry, kind)) earlier.set(kind, [...before, { index, label: labelOf(entry, index), match }]);
  });
  return warnings;
}
