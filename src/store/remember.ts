// Small memos for the stores' per-step work: an attempt's two steps (and a turn's calls) pass the
// same scope object and the same op, so what is derived from them is derived once.

/** `derive` remembered for the object it was last called with (a turn's scope). */
export function rememberLastObject<K extends object, V>(derive: (key: K) => V): (key: K) => V {
  let lastKey: K | undefined;
  let lastValue: V;
  return (key) => {
    if (key !== lastKey) {
      lastValue = derive(key);
      lastKey = key;
    }
    return lastValue;
  };
}

/** Texts remembered by {@link rememberRecentTexts}, and the longest one remembered. */
const RECENT_TEXTS = 256;
const RECENT_TEXT_CHARS = 1024;

/**
 * `derive` (a hash, say) remembered for the last 256 texts of up to 1024 characters: calls in
 * flight together interleave their steps, so one remembered text would rarely be the one asked.
 */
export function rememberRecentTexts(derive: (text: string) => string): (text: string) => string {
  const kept = new Map<string, string>();
  return (text) => {
    let value = kept.get(text);
    if (value === undefined) {
      value = derive(text);
      if (text.length <= RECENT_TEXT_CHARS) {
        if (kept.size >= RECENT_TEXTS) kept.delete(kept.keys().next().value as string);
        kept.set(text, value);
      }
    }
    return value;
  };
}
