/**
 * `work`'s value, or `undefined` when it has not settled within `ms` (a rejection within `ms`
 * rejects). For Redis connections that queue while Redis is away, with no command timeout: a wait
 * on them is bounded here, where the caller has a better answer than waiting.
 */
export function answerWithin<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
