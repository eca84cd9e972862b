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

/**
 * True when `work` settles (either way) before `deadline` (epoch ms), false past it; a later
 * rejection is ignored. The timer is unref'd unless `holdProcess`: a wait that must not keep the
 * process up (a trace flush at exit) passes false.
 */
export function settlesBefore(work: Promise<unknown>, deadline: number, holdProcess = true): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, deadline - Date.now()), false);
    if (!holdProcess) timer.unref();
  });
  const settled = work.then(
    () => true,
    () => true,
  );
  return Promise.race([settled, late]).finally(() => clearTimeout(timer));
}
