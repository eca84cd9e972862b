import fc from 'fast-check';
import { abortHookOf, Deadlines, runGuarded, type Deadline, type SignalSource } from '../../src/pipeline';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Deadlines: many deadlines on one timer', () => {
  it('fires each deadline once, not before its time, in any order of adding', async () => {
    const deadlines = new Deadlines();
    const fired: Array<[string, number]> = [];
    const started = performance.now();
    const mark = (name: string) => () => fired.push([name, performance.now() - started]);
    deadlines.add(60, mark('60'));
    deadlines.add(20, mark('20'));
    deadlines.add(40, mark('40'));
    await sleep(120);
    expect(fired.map(([name]) => name)).toEqual(['20', '40', '60']);
    for (const [name, at] of fired) expect(at).toBeGreaterThanOrEqual(Number(name) - 1);
    expect(deadlines.size).toBe(0);
  });

  it('fires deadlines found due together in the order of their times (a timer that fires late)', () => {
    let now = 0;
    const deadlines = new Deadlines(() => now);
    const fired: string[] = [];
    deadlines.add(60, () => fired.push('60'));
    deadlines.add(20, () => fired.push('20'));
    deadlines.add(40, () => fired.push('40'));
    now = 100;
    (deadlines as unknown as { expire(): void }).expire();
    expect(fired).toEqual(['20', '40', '60']);
  });

  it('any sequence of adds, cancels (again, or after firing) and expiries fires exactly the pending deadlines that are due', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), ms: fc.integer({ min: 0, max: 50 }) }),
      fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 30 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        let now = 0;
        const deadlines = new Deadlines(() => now);
        const expire = () => (deadlines as unknown as { expire(): void }).expire();
        const made: Array<{ deadline: Deadline; at: number; state: 'pending' | 'fired' | 'cancelled' }> = [];
        for (const o of ops) {
          if (o.kind === 'add') {
            const entry = { deadline: undefined as unknown as Deadline, at: now + o.ms, state: 'pending' as 'pending' | 'fired' | 'cancelled' };
            entry.deadline = deadlines.add(o.ms, () => {
              expect(entry.state).toBe('pending');
              expect(entry.at).toBeLessThanOrEqual(now + 1);
              entry.state = 'fired';
            });
            made.push(entry);
          } else if (o.kind === 'cancel' && made.length > 0) {
            const entry = made[o.pick % made.length]!;
            deadlines.cancel(entry.deadline);
            if (entry.state === 'pending') entry.state = 'cancelled';
          } else if (o.kind === 'advance') {
            now += o.ms;
            expire();
            for (const entry of made) if (entry.state === 'pending') expect(entry.at).toBeGreaterThan(now + 1);
          }
          expect(deadlines.size).toBe(made.filter((e) => e.state === 'pending').length);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('never fires a cancelled deadline, and fires the others', async () => {
    const deadlines = new Deadlines();
    const fired: string[] = [];
    const first = deadlines.add(15, () => fired.push('first'));
    deadlines.add(30, () => fired.push('second'));
    deadlines.cancel(first);
    deadlines.cancel(undefined);
    await sleep(70);
    expect(fired).toEqual(['second']);
  });

  it('moves the timer forward when a sooner deadline arrives after a later one', async () => {
    const deadlines = new Deadlines();
    const fired: string[] = [];
    deadlines.add(10_000, () => fired.push('late'));
    deadlines.add(10, () => fired.push('soon'));
    await sleep(50);
    expect(fired).toEqual(['soon']);
    expect(deadlines.size).toBe(1);
  });

  it('fires everything due at once when many share a deadline, and keeps working after', async () => {
    const deadlines = new Deadlines();
    let count = 0;
    for (let i = 0; i < 1000; i++) deadlines.add(10, () => count++);
    await sleep(50);
    expect(count).toBe(1000);
    deadlines.add(5, () => count++);
    await sleep(40);
    expect(count).toBe(1001);
  });
});

describe('runGuarded on the shared deadlines', () => {
  it('times out a tool that ignores its signal, and its signal aborts', async () => {
    let seen: AbortSignal | undefined;
    const outcome = await runGuarded(new AbortController().signal, 20, (source) => {
      seen = source.signal();
      return new Promise(() => undefined);
    });
    expect(outcome.kind).toBe('timeout');
    expect(seen?.aborted).toBe(true);
  });

  it('settles with the value of a fast tool, and its timeout never fires later', async () => {
    const outcome = await runGuarded(new AbortController().signal, 20, async () => 'ok');
    expect(outcome).toEqual({ kind: 'done', value: 'ok' });
    await sleep(40);
  });

  it('tells abort listeners once, with the reason; late ones at once; none after a success; unsubscribed ones never', async () => {
    const heard: string[] = [];
    let source: SignalSource | undefined;
    const outcome = await runGuarded(new AbortController().signal, 20, (s) => {
      source = s;
      s.onAbort((reason) => heard.push(`first: ${(reason as Error).message}`));
      s.onAbort(() => heard.push('unsubscribed'))();
      return new Promise(() => undefined);
    });
    expect(outcome.kind).toBe('timeout');
    source!.onAbort((reason) => heard.push(`late: ${(reason as Error).message}`));
    expect(heard).toEqual(['first: timed out after 20 ms', 'late: timed out after 20 ms']);

    const quiet: unknown[] = [];
    await runGuarded(new AbortController().signal, 20, async (s) => (s.onAbort((r) => quiet.push(r)), 'ok'));
    await sleep(40);
    expect(quiet).toEqual([]);
  });

  it('an AbortSignal serves as an abort hook', () => {
    const controller = new AbortController();
    const heard: unknown[] = [];
    abortHookOf(controller.signal).onAbort((reason) => heard.push(reason));
    controller.abort('stop');
    abortHookOf(controller.signal).onAbort((reason) => heard.push(`late ${String(reason)}`));
    expect(heard).toEqual(['stop', 'late stop']);
  });
});
