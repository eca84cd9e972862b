import { create, toBinary } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { ToolResultSchema } from '../../gen/dispatch/v1/dispatch_pb';
import { abortSubscribers, createAbortScope, delay, onAbort, runGuarded, toAbortSignal, toolResult } from '../../src/pipeline';
import { unlessAborted } from '../../src/pipeline/signals';

describe('toolResult: a ToolResult without create()', () => {
  it('encodes to the same bytes as create() for any fields', () => {
    fc.assert(
      fc.property(
        fc.record(
          {
            toolCallId: fc.string(),
            output: fc.string(),
            attempts: fc.nat(),
            durationMs: fc.nat(),
            resolvedToolName: fc.string(),
            truncated: fc.boolean(),
            resultHandle: fc.string(),
            cached: fc.boolean(),
            idempotentReplay: fc.boolean(),
            warnings: fc.array(fc.string(), { maxLength: 3 }),
          },
          { requiredKeys: [] },
        ),
        (init) => {
          expect(toBinary(ToolResultSchema, toolResult(init))).toEqual(toBinary(ToolResultSchema, create(ToolResultSchema, init)));
        },
      ),
    );
  });

  it('never shares the warnings array between results', () => {
    const a = toolResult({});
    a.warnings.push('mine');
    expect(toolResult({}).warnings).toEqual([]);
  });
});

describe('onAbort on a signal that aborted already', () => {
  const never = new Promise<string>(() => undefined);
  const within = <T>(work: Promise<T>, ms: number) => Promise.race([work, new Promise((r) => setTimeout(() => r('still waiting'), ms))]);

  test('runs the callback on the next microtask, for a scope signal and an AbortSignal alike', async () => {
    const scope = createAbortScope();
    scope.abort();
    const controller = new AbortController();
    // A first subscriber made the shared listener, which ran at the abort and is gone.
    onAbort(controller.signal, () => undefined);
    controller.abort();
    const heard: string[] = [];
    onAbort(scope.signal, () => heard.push('scope'));
    onAbort(controller.signal, () => heard.push('signal'));
    expect(heard).toEqual([]);
    await Promise.resolve();
    expect(heard).toEqual(['scope', 'signal']);
  });

  test('not once unsubscribed; and unlessAborted answers at once', async () => {
    const scope = createAbortScope();
    scope.abort();
    const heard: string[] = [];
    onAbort(scope.signal, () => heard.push('late'))();
    await Promise.resolve();
    expect(heard).toEqual([]);
    expect(await within(unlessAborted(never, scope.signal), 200)).toBeUndefined();
  });
});

describe('createAbortScope: a turn signal without an AbortController', () => {
  it('runs subscribers once on abort, with a default AbortError reason', () => {
    const scope = createAbortScope();
    let runs = 0;
    onAbort(scope.signal, () => runs++);
    const unsubscribed = onAbort(scope.signal, () => runs++);
    unsubscribed();
    expect(scope.signal.aborted).toBe(false);
    scope.abort();
    scope.abort();
    expect(runs).toBe(1);
    expect(scope.signal.aborted).toBe(true);
    expect((scope.signal.reason as Error).name).toBe('AbortError');
  });

  it('runs each subscriber once, in subscription order, whether it took the first slot or the Set', () => {
    const scope = createAbortScope();
    const heard: string[] = [];
    const a = () => heard.push('a');
    const b = () => heard.push('b');
    const offA = onAbort(scope.signal, a);
    onAbort(scope.signal, a); // again: still once, as a Set would hold it
    onAbort(scope.signal, b);
    expect(abortSubscribers(scope.signal)).toBe(2);
    offA();
    onAbort(scope.signal, () => heard.push('c'));
    expect(abortSubscribers(scope.signal)).toBe(2);
    const offD = onAbort(scope.signal, () => heard.push('d'));
    offD();
    offA(); // a second unsubscribe removes nothing else
    scope.abort();
    expect(heard).toEqual(['b', 'c']);
    expect(abortSubscribers(scope.signal)).toBe(0);
  });

  it('gives a real AbortSignal on request, which aborts with the scope (before or after)', () => {
    const early = createAbortScope();
    const signal = toAbortSignal(early.signal);
    expect(toAbortSignal(early.signal)).toBe(signal);
    expect(signal.aborted).toBe(false);
    early.abort(new Error('gone'));
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe('gone');
    const late = createAbortScope();
    late.abort(new Error('already'));
    expect(toAbortSignal(late.signal).aborted).toBe(true);
    const plain = new AbortController().signal;
    expect(toAbortSignal(plain)).toBe(plain);
  });

  it('cancels a guarded run and a delay', async () => {
    const scope = createAbortScope();
    const run = runGuarded(scope.signal, 10_000, () => new Promise(() => undefined));
    const waiting = delay(10_000, scope.signal);
    scope.abort(new Error('client went away'));
    expect((await run).kind).toBe('cancelled');
    await expect(waiting).rejects.toThrow('client went away');
  });
});
