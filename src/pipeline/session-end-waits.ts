import type { SessionScope, Store } from '../store';

type Waits = Map<string, Set<() => void>>;

/** Per store, the waits of each session (its key) to end with it: one session-end listener per store. */
const byStore = new WeakMap<Store, Waits>();

const keyOf = (scope: SessionScope) => `${scope.tenant}\u0000${scope.sessionId}`;

/**
 * Calls `ended` when `scope`'s session ends (EndSession here or, on a store replicas share, as
 * another replica's end is heard), until the returned function is called. For waits that must not
 * outlive their session: an approval still pending when its session ended could be granted
 * afterwards, and its call then ran in the ended session's fresh state.
 */
export function onSessionEnded(store: Store, scope: SessionScope, ended: () => void): () => void {
  let waits = byStore.get(store);
  if (waits === undefined) {
    const made: Waits = new Map();
    store.onSessionEnd((s) => {
      const those = made.get(keyOf(s));
      made.delete(keyOf(s));
      for (const end of those ?? []) end();
    });
    byStore.set(store, (waits = made));
  }
  const key = keyOf(scope);
  let those = waits.get(key);
  if (those === undefined) waits.set(key, (those = new Set()));
  those.add(ended);
  const held = waits;
  const set = those;
  return () => {
    set.delete(ended);
    if (set.size === 0 && held.get(key) === set) held.delete(key);
  };
}
