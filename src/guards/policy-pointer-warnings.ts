import type { ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import { suggestKey } from '../config/unknown-key';
import { firstToken, quoted, schemaNames, undeclaredName, withFirstToken, type SchemaNames, type UndeclaredName } from '../registry/pointer-names';
import { globAny } from './glob';
import { CHECKED_BEFORE, isRecord, parseMatch } from './parse-rule';
import type { StartupWarning } from './startup-warnings';

/** What a rule's pointer that reads nothing does, by where it is in the rule. */
const EFFECT = {
  when: (decide: string) => `the condition never holds, so the ${decide} rule never applies to a call of it`,
  set: () => 'the modify rule sets a property the schema does not declare: where it allows no other, every call it fits is refused INVALID_ARGUMENTS',
  remove: () => 'the modify rule removes nothing',
} as const;

/** Names of a schema's properties shown in a warning. */
const SHOWN = 5;

/**
 * What is wrong with `pointer` against a tool's schema, read more loosely than for a tool's own
 * pointers (pointerNameProblem refuses those): a name of any length one edit or a swap from a
 * declared one (`/msx` for `/ms`, `/tga` for `/tag`: too short, or a swap, for near-keys.ts),
 * and any undeclared name where no `patternProperties` may declare it, the schema open or not
 * (`/amount` against a schema declaring `ms` and `tag`). A warning, which a policy reading a
 * property its schema leaves undescribed on purpose may ignore.
 */
function policyPointerProblem(names: SchemaNames, pointer: string): UndeclaredName | undefined {
  const strict = undeclaredName(names, pointer);
  if (strict?.meant !== undefined || names.patterned) return strict;
  const { name, rest } = firstToken(pointer);
  if (names.declared.includes(name)) return undefined;
  const near = suggestKey(name, names.declared);
  if (near !== undefined) return { name, meant: withFirstToken(near, rest) };
  return strict ?? { name, declared: `${names.declared.slice(0, SHOWN).map(quoted).join(', ')}${names.declared.length > SHOWN ? `, and ${names.declared.length - SHOWN} more` : ''}` };
}

/** The pointers of a `decide:` entry, each with where it is (`when[0].pointer`, `set./a`, `remove[1]`) and its kind. */
function pointersOf(entry: Record<string, unknown>): { at: string; pointer: string; kind: keyof typeof EFFECT }[] {
  const out: { at: string; pointer: string; kind: keyof typeof EFFECT }[] = [];
  if (Array.isArray(entry.when)) {
    entry.when.forEach((c, i) => isRecord(c) && typeof c.pointer === 'string' && out.push({ at: `when[${i}].pointer`, pointer: c.pointer, kind: 'when' }));
  }
  if (isRecord(entry.set)) for (const pointer of Object.keys(entry.set)) out.push({ at: `set.${pointer}`, pointer, kind: 'set' });
  if (Array.isArray(entry.remove)) entry.remove.forEach((p, i) => typeof p === 'string' && out.push({ at: `remove[${i}]`, pointer: p, kind: 'remove' }));
  return out.filter((p) => p.pointer.startsWith('/'));
}

/**
 * The pointers of `decide:` entries (`when`, `set`, `remove`) that name a property no config-file
 * tool the entry fits declares: a near miss of a declared property, or any name where the schema
 * allows no other (pointer-names.ts reads them as for `primary_parameter`). Before, a misspelt
 * `when` pointer (`/amout`) loaded silently and its block rule never fired; a misspelt `set` had
 * every call refused for arguments the schema refuses, naming neither. Warnings, as the `match:`
 * ones: a tool registered later may be what the entry is for. An entry fitting no config-file
 * tool is left to policyMatchWarnings.
 */
export function policyPointerWarnings(policies: readonly unknown[], tools: readonly ToolSpec[]): StartupWarning[] {
  const names = new Map<ToolSpec, SchemaNames | undefined>();
  const namesOf = (tool: ToolSpec) => (names.has(tool) ? names.get(tool) : names.set(tool, schemaNames(tool.inputSchema)).get(tool));
  const warnings: StartupWarning[] = [];
  policies.forEach((entry, index) => {
    if (!isRecord(entry) || typeof entry.decide !== 'string') return;
    const match = parseMatch(entry.match, CHECKED_BEFORE);
    const fits = tools.filter((tool) => globAny(match, tool.name));
    if (fits.length === 0) return;
    const label = typeof entry.name === 'string' ? `policies[${index}] (${entry.name})` : `policies[${index}]`;
    for (const { at, pointer, kind } of pointersOf(entry)) {
      const problems = fits.map((tool) => {
        const of = namesOf(tool);
        return of && policyPointerProblem(of, pointer);
      });
      // A tool that declares it, or may (an open schema, none readable): the pointer is for that one.
      if (problems.some((p) => !p)) continue;
      const [tool, problem] = [fits[0]!, problems[0]!];
      const which = fits.length === 1 ? `"${tool.name}"` : `any of the ${fits.length} tools it fits (${fits.slice(0, 3).map((t) => `"${t.name}"`).join(', ')}${fits.length > 3 ? ', ...' : ''})`;
      const hint = problem.meant !== undefined ? ` (did you mean ${quoted(problem.meant)}?)` : problem.allowed !== undefined ? `, which allows no other: ${problem.allowed}` : ` (it declares ${problem.declared})`;
      warnings.push({
        message: `${label}: ${at} ${quoted(pointer)} names the property ${quoted(problem.name)}, which the input_schema of ${which} does not declare${hint}; as written, ${EFFECT[kind](entry.decide)}`,
        fields: { policy: index, at, pointer, tools: fits.map((t) => t.name).slice(0, 10) },
      });
    }
  });
  return warnings;
}

/** What reads as a regular expression in a glob: anchors, escaped classes (`\\d`), `.*` or `.+`, alternation, a bracketed class. */
const REGEX_LIKE = /^\^|\$$|\\[dDwWsSb.]|\.[*+]|\||\[.*\]/;

/**
 * `when` conditions `op: matches` whose value reads as a regular expression (`^prod`, `\d+`,
 * `a|b`): `matches` is a glob (`*` and `?` only), so `^prod` matches only text holding a `^`, and
 * the rule never applies (an SRE's probe: an ask rule written so let `prod-db` run unasked).
 */
export function regexGlobWarnings(policies: readonly unknown[]): StartupWarning[] {
  const warnings: StartupWarning[] = [];
  policies.forEach((entry, index) => {
    if (!isRecord(entry) || !Array.isArray(entry.when)) return;
    const label = typeof entry.name === 'string' ? `policies[${index}] (${entry.name})` : `policies[${index}]`;
    entry.when.forEach((c, i) => {
      if (!isRecord(c) || c.op !== 'matches' || typeof c.value !== 'string' || !REGEX_LIKE.test(c.value)) return;
      warnings.push({
        message: `${label}: when[${i}] matches ${quoted(c.value)}, which reads as a regular expression, but matches is a glob (* any run of characters, ? one): as written, it matches only text holding those characters themselves (for "starts with prod", write "prod*")`,
        fields: { policy: index, at: `when[${i}].value`, value: c.value },
      });
    });
  });
  return warnings;
}
