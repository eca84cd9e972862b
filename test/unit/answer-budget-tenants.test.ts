import { createAnswerBudget } from '../../src/executors/answer-budget';

// The answer budget per tenant: a tenant's readers hold at most its share beyond its oldest reader,
// which never waits; one tenant's waits never hold up another tenant's reads.

const signal = new AbortController().signal;
const settled = async (promise: Promise<void> | undefined) => {
  let done = promise === undefined;
  void promise?.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
};

test("a tenant past its share waits; another tenant's reads are taken at once, even behind its wait", async () => {
  const budget = createAnswerBudget(1000, 300);
  const [a1, a2] = [budget.open('a'), budget.open('a')];
  expect(a1.take(250, signal)).toBeUndefined();
  const a2Waits = a2.take(100, signal);
  expect(a2Waits).toBeInstanceOf(Promise);
  const b = budget.open('b');
  expect(b.take(300, signal)).toBeUndefined();
  expect([budget.inUseBy('a'), budget.inUseBy('b'), budget.inUse()]).toEqual([250, 300, 550]);
  // Room given back by b does not help a, which waits for its own share.
  b.close();
  expect(await settled(a2Waits)).toBe(false);
  a1.close();
  expect(await settled(a2Waits)).toBe(true);
  expect(budget.inUseBy('a')).toBe(100);
  a2.close();
  expect([budget.inUse(), budget.inUseBy('a')]).toEqual([0, 0]);
});

test("a tenant's oldest reader never waits for its share, only for the total; the oldest reader of all never waits", async () => {
  const budget = createAnswerBudget(1000, 300);
  const [a1, a2] = [budget.open('a'), budget.open('a')];
  expect(a1.take(700, signal)).toBeUndefined(); // past a's share: the oldest of a, and of all
  const a2Waits = a2.take(1, signal); // a is past its share
  expect(a2Waits).toBeInstanceOf(Promise);
  const b = budget.open('b');
  expect(b.take(250, signal)).toBeUndefined(); // a's wait does not hold b up
  // b's oldest passes no share, but waits for the total; the oldest of all does not.
  const bWaits = b.take(100, signal);
  expect(bWaits).toBeInstanceOf(Promise);
  expect(a1.take(500, signal)).toBeUndefined();
  const c = budget.open('c');
  const cWaits = c.take(10, signal);
  expect(cWaits).toBeInstanceOf(Promise);
  expect(budget.inUse()).toBe(1450);
  // a1's room goes to the waiters that fit: b's, c's, and a2, now a's oldest (and the oldest of all).
  a1.close();
  for (const wait of [bWaits, cWaits, a2Waits]) expect(await settled(wait)).toBe(true);
  expect([budget.inUseBy('a'), budget.inUseBy('b'), budget.inUseBy('c'), budget.inUse()]).toEqual([1, 350, 10, 361]);
});

test("several tenants' oldest readers take the total past the budget by at most one answer", async () => {
  // 8 tenants each read a 64 MiB answer at once, 1 MiB a chunk, under the default 64 MiB and
  // 16 MiB a tenant: the total passed 64 MiB by one answer per tenant (512 MiB held).
  const MiB = 1024 * 1024;
  const budget = createAnswerBudget(64 * MiB, 16 * MiB);
  const readers = [...Array(8).keys()].map((t) => ({ reader: budget.open(`t${t}`), taken: 0, wait: undefined as Promise<void> | undefined }));
  let most = 0;
  const done: number[] = [];
  for (let round = 0; round < 1000 && done.length < readers.length; round++) {
    for (const [t, r] of readers.entries()) {
      if (r.wait || done.includes(t)) continue;
      if (r.taken < 64) {
        r.wait = r.reader.take(MiB, signal);
        if (r.wait) void r.wait.then(() => ((r.wait = undefined), r.taken++));
        else r.taken++;
        most = Math.max(most, budget.inUse());
      }
      if (r.taken === 64) {
        r.reader.close();
        done.push(t);
      }
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  expect(done).toHaveLength(8);
  expect(most).toBeLessThanOrEqual(128 * MiB);
  expect(budget.inUse()).toBe(0);
});

test("a tenant's readers take room in the order they asked; room given back goes to the waiters that fit", async () => {
  const budget = createAnswerBudget(1000, 300);
  const [a1, a2, a3] = [budget.open('a'), budget.open('a'), budget.open('a')];
  a1.take(200, signal);
  const big = a2.take(250, signal);
  // 50 would fit a's share, but a2 asked first.
  const small = a3.take(50, signal);
  expect(small).toBeInstanceOf(Promise);
  a1.close(); // a2 is now a's oldest: it reads; a3 fits beside it.
  expect(await settled(big)).toBe(true);
  expect(await settled(small)).toBe(true);
  expect(budget.inUseBy('a')).toBe(300);
});

test('a wait ends with its abort or its close, and the next waiter of its tenant is served', async () => {
  const budget = createAnswerBudget(1000, 100);
  const [a1, a2, a3] = [budget.open('a'), budget.open('a'), budget.open('a')];
  a1.take(60, signal);
  const controller = new AbortController();
  const aborted = a2.take(80, controller.signal);
  const next = a3.take(40, signal);
  expect(await settled(next)).toBe(false);
  controller.abort(new Error('the tool timed out'));
  await expect(aborted).rejects.toThrow('the tool timed out');
  expect(await settled(next)).toBe(true);
  expect(budget.inUseBy('a')).toBe(100);
  const a4 = budget.open('a');
  const closed = a4.take(10, signal);
  a4.close();
  await expect(closed).rejects.toThrow('the answer read ended');
  a1.close();
  a2.close();
  a3.close();
  expect(budget.inUse()).toBe(0);
});
