import { createAnswerBudget } from '../../src/executors/answer-budget';

// The answer budget per tenant: a tenant's readers hold at most its share beyond its oldest reader;
// one tenant's waits never hold up another tenant's reads, nor do its bytes while the other holds
// less than an equal split of the budget; the oldest reader of all never waits.

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

test("a tenant's oldest reader never waits for its share; past the total, a tenant waits once it holds its split; the oldest reader of all never waits", async () => {
  const budget = createAnswerBudget(1000, 300);
  const [a1, a2] = [budget.open('a'), budget.open('a')];
  expect(a1.take(700, signal)).toBeUndefined(); // past a's share: the oldest of a, and of all
  const a2Waits = a2.take(1, signal); // a is past its share
  expect(a2Waits).toBeInstanceOf(Promise);
  const b = budget.open('b');
  expect(b.take(250, signal)).toBeUndefined(); // a's wait does not hold b up
  // b's oldest passes no share; past the total it reads while b holds less than half the budget
  // (2 tenants read), then waits for the total. The oldest of all does not.
  expect(b.take(300, signal)).toBeUndefined();
  const bWaits = b.take(100, signal);
  expect(bWaits).toBeInstanceOf(Promise);
  expect(a1.take(500, signal)).toBeUndefined();
  // c holds nothing, less than its split (a third): it reads at once, past the total.
  const c = budget.open('c');
  expect(c.take(10, signal)).toBeUndefined();
  expect(budget.inUse()).toBe(1760);
  // a1's room goes to the waiters that fit: b's, and a2, now a's oldest (and the oldest of all).
  a1.close();
  for (const wait of [bWaits, a2Waits]) expect(await settled(wait)).toBe(true);
  expect([budget.inUseBy('a'), budget.inUseBy('b'), budget.inUseBy('c'), budget.inUse()]).toEqual([1, 650, 10, 661]);
});

test("another tenant's stalled answer holding the whole total does not hold up a tenant within its equal split", async () => {
  const budget = createAnswerBudget(1000, 1000);
  const g = budget.open('g'); // the oldest reader of all, waiting on its server: holds nothing
  const a = budget.open('a');
  expect(a.take(1000, signal)).toBeUndefined(); // a's only answer takes the whole total, and stalls
  // b holds less than a third of the budget (3 tenants read): it reads past the total at once.
  const b = budget.open('b');
  expect(b.take(100, signal)).toBeUndefined();
  expect(b.take(300, signal)).toBeUndefined();
  // 400 held, past its split: b waits for the total...
  const bWaits = b.take(50, signal);
  expect(bWaits).toBeInstanceOf(Promise);
  // ...until a tenant stops reading (g, holding nothing): b's split is now half the budget.
  g.close();
  expect(await settled(bWaits)).toBe(true);
  expect([budget.inUseBy('a'), budget.inUseBy('b'), budget.inUse()]).toEqual([1000, 450, 1450]);
  a.close();
  b.close();
  expect(budget.inUse()).toBe(0);
});

test("several tenants' oldest readers take the total past the budget by at most the budget and one answer", async () => {
  // 8 tenants each read a 64 MiB answer at once, 1 MiB a chunk, under the default 64 MiB and
  // 16 MiB a tenant: once each tenant's oldest could pass the total, 512 MiB were held. Past the
  // total a tenant reads only below its split (64 MiB / 8): at most 2 x 64 MiB, the oldest reader's
  // answer (64 MiB) and a chunk per tenant (124 MiB seen).
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
  expect(most).toBeLessThanOrEqual(2 * 64 * MiB + 64 * MiB + 8 * MiB);
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
