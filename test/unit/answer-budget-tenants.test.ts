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

test("each tenant's oldest reader never waits, for its share or for the total", () => {
  const budget = createAnswerBudget(1000, 500);
  const [a1, a2, a3] = [budget.open('a'), budget.open('a'), budget.open('a')];
  expect(a1.take(700, signal)).toBeUndefined(); // past a's share: the oldest of a
  expect(a2.take(1, signal)).toBeInstanceOf(Promise);
  const b = budget.open('b');
  expect(b.take(400, signal)).toBeUndefined();
  // The total is full (1,100): b's oldest still reads; c's first reader too.
  expect(b.take(100, signal)).toBeUndefined();
  const c = budget.open('c');
  expect(c.take(50, signal)).toBeUndefined();
  expect(budget.inUse()).toBe(1250);
  // c's second reader is not its oldest: it waits for the total.
  expect(budget.open('c').take(10, signal)).toBeInstanceOf(Promise);
  expect(a3.take(1, signal)).toBeInstanceOf(Promise);
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
