/**
 * True when `text` matches the glob `pattern`: `*` is any run of characters (possibly empty), `?`
 * one character, anything else itself. Iterative with one backtrack point, so the cost is at most
 * O(pattern x text) and never exponential, whatever a model sends.
 */
export function globMatch(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    const c = pattern[p];
    if (c === '*') {
      star = p++;
      resume = t;
    } else if (c !== undefined && (c === '?' || c === text[t])) {
      p++;
      t++;
    } else if (star >= 0) {
      p = star + 1;
      t = ++resume;
    } else return false;
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}

/** True when any of `patterns` matches `text`. */
export function globAny(patterns: readonly string[], text: string): boolean {
  for (const pattern of patterns) if (globMatch(pattern, text)) return true;
  return false;
}

/** Tool names whose matching rules {@link rulesByTool} keeps; calls of further names filter anew. */
const MAX_TOOLS_KEPT = 4096;

/**
 * The rules whose `match` globs match a tool's name, in their order, remembered per name: a call
 * then walks only its own tool's rules instead of matching every rule's globs against its name
 * (with 1,000 rules for other tools, that was most of an attempt's cost). `rules` must not change.
 */
export function rulesByTool<R extends { readonly match: readonly string[] }>(rules: readonly R[]): (tool: string) => readonly R[] {
  const kept = new Map<string, readonly R[]>();
  return (tool) => {
    let matching = kept.get(tool);
    if (matching === undefined) {
      matching = rules.filter((rule) => globAny(rule.match, tool));
      if (kept.size < MAX_TOOLS_KEPT) kept.set(tool, matching);
    }
    return matching;
  };
}

/** The first of `policies` whose `match` globs match a tool name (see {@link rulesByTool}). */
export function firstMatching<P extends { readonly match: readonly string[] }>(policies: readonly P[]): (name: string) => P | undefined {
  const matching = rulesByTool(policies);
  return (name) => matching(name)[0];
}
