import fc from 'fast-check';
import { planWaves, resolveWaveOptions, resourceKeyOf, type PlannedCall, type Wave, type WaveToolInfo } from '../../src/waves';

const TOOLS: Record<string, WaveToolInfo> = {
  read_file: { concurrencySafe: true, resourceKey: '/path' },
  fetch: { concurrencySafe: true, resourceKey: '' },
  write_file: { concurrencySafe: false, resourceKey: '/path' },
};
const lookup = (name: string) => TOOLS[name];

const callArb: fc.Arbitrary<PlannedCall> = fc.record({
  name: fc.constantFrom('read_file', 'read_file', 'read_file', 'fetch', 'write_file', 'nope'),
  arguments: fc.oneof(
    fc.constantFrom('a', 'b', 'c').map((path) => JSON.stringify({ path })),
    fc.constant('{"other":1}'),
    fc.constant('{not json'),
  ),
});
const turnArb = fc.array(callArb, { maxLength: 24 });

const keyOf = (call: PlannedCall) => {
  const tool = lookup(call.name);
  return tool?.concurrencySafe ? resourceKeyOf(call.arguments, tool.resourceKey) : undefined;
};
const exclusive = (call: PlannedCall) => !lookup(call.name)?.concurrencySafe;
const conflict = (a: PlannedCall, b: PlannedCall) => exclusive(a) || exclusive(b) || (keyOf(a) !== undefined && keyOf(a) === keyOf(b));
const waveIndex = (waves: Wave[], n: number) => {
  const of = new Array<number>(n).fill(-1);
  waves.forEach((wave, w) => wave.calls.forEach((i) => (of[i] = w)));
  return of;
};

describe('planWaves properties', () => {
  test('every call is planned exactly once, and each wave lists its calls in request order', () => {
    fc.assert(
      fc.property(turnArb, (calls) => {
        const waves = planWaves(calls, lookup);
        const all = waves.flatMap((w) => w.calls);
        expect([...all].sort((a, b) => a - b)).toEqual(calls.map((_, i) => i));
        for (const wave of waves) {
          expect(wave.calls.length).toBeGreaterThan(0);
          expect([...wave.calls].sort((a, b) => a - b)).toEqual(wave.calls);
        }
      }),
    );
  });

  test('no wave holds two calls with the same resource key', () => {
    fc.assert(
      fc.property(turnArb, (calls) => {
        for (const wave of planWaves(calls, lookup)) {
          const keys = wave.calls.map((i) => keyOf(calls[i]!)).filter((k) => k !== undefined);
          expect(new Set(keys).size).toBe(keys.length);
        }
      }),
    );
  });

  test('an unsafe or unknown call has a wave of its own, marked exclusive; safe calls never do', () => {
    fc.assert(
      fc.property(turnArb, (calls) => {
        for (const wave of planWaves(calls, lookup)) {
          expect(wave.exclusive).toBe(wave.calls.some((i) => exclusive(calls[i]!)));
          if (wave.exclusive) expect(wave.calls).toHaveLength(1);
        }
      }),
    );
  });

  test('conflicting calls keep their relative order, and nothing overtakes an unsafe call', () => {
    fc.assert(
      fc.property(turnArb, (calls) => {
        const of = waveIndex(planWaves(calls, lookup), calls.length);
        for (let i = 0; i < calls.length; i++) {
          for (let j = i + 1; j < calls.length; j++) {
            if (conflict(calls[i]!, calls[j]!)) expect(of[i]).toBeLessThan(of[j]!);
          }
        }
      }),
    );
  });

  test('a safe call joins the earliest wave open to it: never a later one than it needs', () => {
    fc.assert(
      fc.property(turnArb, (calls) => {
        const waves = planWaves(calls, lookup);
        const of = waveIndex(waves, calls.length);
        calls.forEach((call, j) => {
          if (exclusive(call)) return;
          // Every earlier wave it could have joined either is (or precedes) the wave of an earlier
          // exclusive call, or holds an earlier call with its key.
          for (let w = 0; w < of[j]!; w++) {
            const barrier = calls.some((c, i) => i < j && exclusive(c) && of[i]! >= w);
            const taken = waves[w]!.calls.some((i) => i < j && keyOf(calls[i]!) !== undefined && keyOf(calls[i]!) === keyOf(call));
            expect(barrier || taken).toBe(true);
          }
        });
      }),
    );
  });
});

describe('planWaves properties with loop operations', () => {
  // A call's loop operation: its tool and its arguments' `path` (the tool's primary parameter) or,
  // for a tool without one, all its arguments; arguments that are not JSON never run: none.
  const loopOf = (call: PlannedCall): string[] | undefined => {
    let args: { path?: unknown };
    try {
      args = JSON.parse(call.arguments) as { path?: unknown };
    } catch {
      return undefined;
    }
    return [`${call.name}\u0000${call.name === 'fetch' ? call.arguments : JSON.stringify(args.path ?? null)}`];
  };
  const opOf = (call: PlannedCall) => (exclusive(call) ? undefined : loopOf(call)?.[0]);
  const sameOp = (a: PlannedCall, b: PlannedCall) => opOf(a) !== undefined && opOf(a) === opOf(b);
  const plan = (calls: readonly PlannedCall[]) => planWaves(calls, lookup, undefined, loopOf);

  test('identical loop operations never share a wave, and keep their request order', () => {
    fc.assert(
      fc.property(turnArb, (calls) => {
        const waves = plan(calls);
        for (const wave of waves) {
          const ops = wave.calls.map((i) => opOf(calls[i]!)).filter((op) => op !== undefined);
          expect(new Set(ops).size).toBe(ops.length);
        }
        const of = waveIndex(waves, calls.length);
        for (let i = 0; i < calls.length; i++) {
          for (let j = i + 1; j < calls.length; j++) {
            if (conflict(calls[i]!, calls[j]!) || sameOp(calls[i]!, calls[j]!)) expect(of[i]).toBeLessThan(of[j]!);
          }
        }
      }),
    );
  });

  test('every call is still planned exactly once; resource keys still never share a wave', () => {
    fc.assert(
      fc.property(turnArb, (calls) => {
        const waves = plan(calls);
        expect(waves.flatMap((w) => w.calls).sort((a, b) => a - b)).toEqual(calls.map((_, i) => i));
        for (const wave of waves) {
          const keys = wave.calls.map((i) => keyOf(calls[i]!)).filter((k) => k !== undefined);
          expect(new Set(keys).size).toBe(keys.length);
        }
      }),
    );
  });

  test('identical calls go to successive waves; other calls still share the first', () => {
    const same = { name: 'fetch', arguments: '{"q":1}' };
    expect(plan([same, same, { name: 'fetch', arguments: '{"q":2}' }, same]).map((w) => w.calls)).toEqual([[0, 2], [1], [3]]);
  });
});

describe('planWaves examples', () => {
  const call = (name: string, path?: string): PlannedCall => ({ name, arguments: JSON.stringify(path === undefined ? {} : { path }) });
  const plan = (calls: PlannedCall[]) => planWaves(calls, lookup).map((w) => w.calls);

  test('eight safe calls on different resources make one wave', () => {
    expect(plan(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((p) => call('read_file', p)))).toEqual([[0, 1, 2, 3, 4, 5, 6, 7]]);
  });

  test('a second call on a key waits a wave; a call on another key still joins the first', () => {
    expect(plan([call('read_file', 'a'), call('read_file', 'a'), call('read_file', 'b'), call('read_file', 'a')])).toEqual([[0, 2], [1], [3]]);
  });

  test('an unsafe call closes the waves before it', () => {
    expect(plan([call('read_file', 'a'), call('write_file', 'z'), call('fetch'), call('read_file', 'b')])).toEqual([[0], [1], [2, 3]]);
  });

  test('an unknown tool gets a wave of its own', () => {
    expect(plan([call('fetch'), call('nope'), call('fetch')])).toEqual([[0], [1], [2]]);
  });

  test('keys compare as canonical JSON; arguments that are not JSON have no key', () => {
    const obj = (json: string): PlannedCall => ({ name: 'read_file', arguments: json });
    expect(plan([obj('{"path":{"x":1,"y":2}}'), obj('{"path":{"y":2,"x":1}}'), obj('{bad'), obj('{bad')])).toEqual([[0, 2, 3], [1]]);
  });

  test('no calls, no waves', () => {
    expect(plan([])).toEqual([]);
  });
});

describe('resolveWaveOptions', () => {
  test('defaults max_concurrency to 8 and refuses a bound that is not a positive integer', () => {
    expect(resolveWaveOptions()).toEqual({ defaultMaxConcurrency: 8 });
    expect(() => resolveWaveOptions({ defaultMaxConcurrency: 0 })).toThrow('defaultMaxConcurrency must be a positive integer, got 0');
    expect(() => resolveWaveOptions({ defaultMaxConcurrency: 2.5 })).toThrow('defaultMaxConcurrency must be a positive integer, got 2.5');
  });
});
