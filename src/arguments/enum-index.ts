import { nearMissOf, readWords, type ReadWords } from './enum-near-miss';

/**
 * Comparisons with enum values a lenient repair makes at most per call, looking for misspellings.
 * Each value the enum refused was compared with every allowed string, its words read again each
 * time: 1,000 items against an enum of 10,000 strings took 42 s of the event loop every tenant
 * shares (100 items 3.6 s). Past it, a refused value is not looked at for a misspelling (its call
 * gets the schema's message, as without repair), and the refusal says so once.
 */
export const MAX_ENUM_COMPARISONS = 100_000;

/** What is left of a call's {@link MAX_ENUM_COMPARISONS}, and whether a value went unchecked. */
export interface EnumBudget {
  left: number;
  spent: boolean;
}

export const enumBudget = (): EnumBudget => ({ left: MAX_ENUM_COMPARISONS, spent: false });

/** An enum read once: its values for membership, its strings by lower case and by their words. */
interface EnumIndex {
  readonly values: ReadonlySet<unknown>;
  readonly byLower: ReadonlyMap<string, readonly string[]>;
  readonly strings: readonly (ReadWords & { readonly value: string })[];
}

/** Each enum's index, by its array in the schema (a tool's schema object lives as long as the tool). */
const indexes = new WeakMap<readonly unknown[], EnumIndex>();

function indexOf(allowed: readonly unknown[]): EnumIndex {
  let index = indexes.get(allowed);
  if (index === undefined) {
    const byLower = new Map<string, string[]>();
    const strings: (ReadWords & { readonly value: string })[] = [];
    for (const value of allowed) {
      if (typeof value !== 'string') continue;
      const lower = value.toLowerCase();
      byLower.set(lower, [...(byLower.get(lower) ?? []), value]);
      strings.push({ value, ...readWords(value) });
    }
    index = { values: new Set(allowed), byLower, strings };
    indexes.set(allowed, index);
  }
  return index;
}

/** Whether `value` is one of `allowed` (===, a Set's lookup: -0 is 0, as for ===). */
export const enumHas = (allowed: readonly unknown[], value: unknown): boolean => indexOf(allowed).values.has(value);

/**
 * The allowed strings `value` equals but for case, else those it is a near miss of
 * (`isNearMiss`), within `budget`: none when comparing it with every allowed string would pass the
 * budget (a partial look could find one where there are two, and correct what it should not).
 */
export function enumMatches(value: string, allowed: readonly unknown[], sideEffects: boolean, budget: EnumBudget): string[] {
  const index = indexOf(allowed);
  const lower = index.byLower.get(value.toLowerCase());
  if (lower !== undefined) return [...lower];
  if (index.strings.length > budget.left) {
    budget.spent = true;
    return [];
  }
  budget.left -= index.strings.length;
  const sent = readWords(value);
  const near: string[] = [];
  for (const entry of index.strings) if (nearMissOf(sent, entry, sideEffects)) near.push(entry.value);
  return near;
}
