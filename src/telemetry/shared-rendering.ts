/**
 * One rendering of a scrape shared by every scrape that asks while it is made (single flight),
 * and served again to those that ask within `cacheMs` of its end; after that it is let go and the
 * next scrape renders anew. A rendering that fails is not kept.
 */
export function sharedRendering<T>(render: () => Promise<T>, cacheMs: number): () => Promise<T> {
  let running: Promise<T> | undefined;
  let kept: T | undefined;
  let expiry: NodeJS.Timeout | undefined;
  return () => {
    if (kept !== undefined) return Promise.resolve(kept);
    running ??= render().then(
      (bytes) => {
        running = undefined;
        if (cacheMs > 0) {
          kept = bytes;
          clearTimeout(expiry);
          expiry = setTimeout(() => (kept = undefined), cacheMs).unref();
        }
        return bytes;
      },
      (error: unknown) => {
        running = undefined;
        throw error;
      },
    );
    return running;
  };
}
