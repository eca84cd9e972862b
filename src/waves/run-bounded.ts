/**
 * Runs `task(0) .. task(count - 1)` with at most `limit` running at once, starting them in index
 * order: a semaphore of `limit` permits, as a pool of `limit` workers. `task` must not reject.
 */
export async function runBounded(count: number, limit: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
}
