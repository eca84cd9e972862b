import fc from 'fast-check';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { createPipeline } from '../../src/app';
import { parseConfig } from '../../src/config';
import { DispatchError, HardError } from '../../src/errors';
import type { BuiltinTool } from '../../src/executors';
import { SILENT_LOGGER } from '../../src/log';
import { executeCall, NOOP_OBSERVER, type TurnContext } from '../../src/pipeline';
import { streakOf, type WindowEntry } from '../../src/store';

/** One call of the sequence: the operation (primary parameter), its result, and whether it fails. */
interface Step {
  readonly op: 'a' | 'b' | 'c';
  readonly result: 'x' | 'y';
  readonly fail: boolean;
}

interface Rules {
  readonly warn: number;
  readonly stop: number;
  readonly failureWarn: number;
  readonly failureBlock: number;
  readonly window: number;
}

type Outcome = 'ok' | 'warn' | 'blocked' | 'stop';

/**
 * An independent model of the rules: per operation, the length of its newest run of identical
 * results; the window holds the newest `window` entries, so an operation's streak is that run cut
 * to how many of its entries the window still holds.
 */
function model(steps: readonly Step[], rules: Rules): Outcome[] {
  const runs = new Map<string, { hash: string; failed: boolean; length: number }>();
  const window: string[] = [];
  const streak = (op: string) => Math.min(runs.get(op)?.length ?? 0, window.filter((o) => o === op).length);
  const outcomes: Outcome[] = [];
  for (const step of steps) {
    const run = runs.get(step.op);
    const before = streak(step.op);
    if (run && !run.failed && before >= rules.stop) {
      outcomes.push('stop');
      return outcomes;
    }
    if (run && run.failed && before >= rules.failureBlock) {
      outcomes.push('blocked');
      continue;
    }
    const hash = `${step.fail ? 'F' : 'S'}${step.result}`;
    if (run && run.hash === hash && before > 0) run.length++;
    else runs.set(step.op, { hash, failed: step.fail, length: 1 });
    window.push(step.op);
    if (window.length > rules.window) window.shift();
    const after = streak(step.op);
    outcomes.push(after >= (step.fail ? rules.failureWarn : rules.warn) ? 'warn' : 'ok');
  }
  return outcomes;
}

const scripted: BuiltinTool = async (args) => {
  const { result, fail } = args as { result: string; fail: boolean };
  if (fail) throw new DispatchError(ErrorKind.TOOL_ERROR, `failed with ${result}`, { phase: 'after' });
  return result;
};

async function pipeline(steps: readonly Step[], rules: Rules): Promise<Outcome[]> {
  const config = parseConfig(
    `
limits: { loop_window: ${rules.window} }
tools:
  - name: scripted
    effect: read_only
    primary_parameter: /op
    loop: { warn_threshold: ${rules.warn}, stop_threshold: ${rules.stop}, failure_warn_threshold: ${rules.failureWarn}, failure_block_threshold: ${rules.failureBlock} }
    builtin: { name: scripted }
`,
    'property.yaml',
  );
  const deps = createPipeline({ config, logger: SILENT_LOGGER, builtins: new Map([['scripted', scripted]]) });
  const turnObserver = NOOP_OBSERVER.turn({ tenant: 't', sessionId: 's', turn: 1, callCount: steps.length });
  const turn: TurnContext = { tenant: 't', sessionId: 's', turn: 1, signal: new AbortController().signal, deadline: Infinity, interactive: false, observer: turnObserver };
  const outcomes: Outcome[] = [];
  for (const [i, step] of steps.entries()) {
    const call = { id: `c${i}`, name: 'scripted', arguments: JSON.stringify(step) } as Parameters<typeof executeCall>[2];
    try {
      const result = await executeCall(deps, turn, call, turnObserver.call({ toolCallId: call.id, tool: call.name, arguments: call.arguments }));
      if (result.error?.kind === ErrorKind.LOOP_BLOCKED) outcomes.push('blocked');
      else outcomes.push(result.warnings.some((w) => w.startsWith('loop warning')) ? 'warn' : 'ok');
    } catch (error) {
      if (!(error instanceof HardError) || error.reason !== 'LOOP_DETECTED') throw error;
      outcomes.push('stop');
      break;
    }
  }
  await deps.store.close();
  return outcomes;
}

const step = fc.record({ op: fc.constantFrom('a' as const, 'b' as const, 'c' as const), result: fc.constantFrom('x' as const, 'y' as const), fail: fc.boolean() });
const rules = fc.record({
  warn: fc.integer({ min: 1, max: 4 }),
  stop: fc.integer({ min: 2, max: 6 }),
  failureWarn: fc.integer({ min: 1, max: 3 }),
  failureBlock: fc.integer({ min: 2, max: 5 }),
  window: fc.integer({ min: 2, max: 40 }),
});

test('the hard stop (and every warning and block) comes exactly when the rules say, for any sequence', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), rules, async (steps, r) => {
      expect(await pipeline(steps, r)).toEqual(model(steps, r));
    }),
    { numRuns: 100 },
  );
}, 120_000);

test('a sequence that repeats one result reaches the stop exactly at call stop + 1', async () => {
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 2, max: 12 }), fc.subarray(['b', 'c'] as const), async (stop, noise) => {
      // Other operations in between, each making progress every time, neither help nor hurt.
      const steps: Step[] = [];
      for (let i = 0; i <= stop; i++) steps.push({ op: 'a', result: 'x', fail: false }, ...noise.map((op) => ({ op, result: i % 2 === 0 ? ('x' as const) : ('y' as const), fail: false })));
      const outcomes = await pipeline(steps, { warn: 100, stop, failureWarn: 100, failureBlock: 100, window: 1000 });
      expect(outcomes.filter((o) => o !== 'stop')).toHaveLength(stop * (1 + noise.length));
      expect(outcomes[outcomes.length - 1]).toBe('stop');
    }),
    { numRuns: 30 },
  );
}, 60_000);

test('streakOf counts the newest run of identical results of an operation, ignoring the others', () => {
  const entry = fc.record({ op: fc.constantFrom('a', 'b'), hash: fc.constantFrom('1', '2'), failed: fc.boolean() });
  fc.assert(
    fc.property(fc.array(entry, { maxLength: 50 }), (window: WindowEntry[]) => {
      const mine = window.filter((e) => e.op === 'a');
      let count = 0;
      for (let i = mine.length - 1; i >= 0 && mine[i]!.hash === mine[mine.length - 1]!.hash; i--) count++;
      const streak = streakOf(window, 'a');
      expect(streak.count).toBe(count);
      expect(streak.failed).toBe(mine.length === 0 ? false : mine[mine.length - 1]!.failed);
    }),
  );
});
