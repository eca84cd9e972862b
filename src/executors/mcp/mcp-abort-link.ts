/** A signal that follows a parent's abort until released. */
export interface AbortLink {
  readonly signal: AbortSignal;
  /** Unlinks `signal`: later aborts of the parent no longer reach it. */
  release(): void;
}

/** The signals linked to each parent and not yet released; one listener per parent serves them all. */
const linked = new WeakMap<AbortSignal, Set<AbortController>>();

/**
 * Links a fresh signal to `parent`. A parent carries one abort listener however many links it
 * has in flight, and a released link leaves nothing on it: a long-lived parent shared by
 * concurrent requests neither grows nor trips Node's max-listeners warning.
 */
export function linkAbort(parent: AbortSignal): AbortLink {
  const controller = new AbortController();
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, release: () => undefined };
  }
  let children = linked.get(parent);
  if (!children) {
    const created = new Set<AbortController>();
    children = created;
    linked.set(parent, created);
    parent.addEventListener('abort', () => {
      for (const child of created) child.abort(parent.reason);
      created.clear();
    }, { once: true });
  }
  const own = children;
  own.add(controller);
  return { signal: controller.signal, release: () => void own.delete(controller) };
}

/** How many links to `parent` are not yet released (for checking that none outlive their work). */
export function openLinks(parent: AbortSignal): number {
  return linked.get(parent)?.size ?? 0;
}
