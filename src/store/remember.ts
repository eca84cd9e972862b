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

/** Texts remembered by {@link rememberRecentTexts} per generation (two are kept), and the longest one remembered. */
const RECENT_TEXTS = 128;
const RECENT_TEXT_CHARS = 1024;

/**
 * `derive` (a hash, say) remembered for the last 128-256 texts of up to 1024 characters: calls in
 * flight together interleave their steps, so one remembered text would rarely be the one asked.
 * Kept in two generations, the older dropped whole when the newer fills: evicting the oldest entry
 * of one Map one at a time (`keys().next()`) walks past every entry deleted before it.
 */
export function rememberRecentTexts<V>(derive: (text: string) => V): (text: string) => V {
  let recent = new Map<string, V>();
  let older = new Map<string, V>();
  return (text) => {
    let value = recent.get(text);
    if (value !== undefined) return value;
    value = older.get(text) ?? derive(text);
    if (text.length <= RECENT_TEXT_CHARS) {
      if (recent.size >= RECENT_TEXTS) {
        older = recent;
        recent = new Map();
      }
      recent.set(text, value);
    }
    return value;
  };
}
