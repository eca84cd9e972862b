/** Polls `read` (sync or async) every 20 ms until it gives a value; throws naming `what` after `ms`. */
export async function until<T>(read: () => T | undefined | Promise<T | undefined>, what: string, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
