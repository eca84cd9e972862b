import fc from 'fast-check';
import { planWaves, type PlannedCall, type WaveToolInfo } from '../../src/waves';
import { slowerThan } from '../helpers/cpu-time';

// Planning is linear in a turn's calls. The planner tested every open wave for each call and
// added each call's keys and loop operations to every wave up to its own: calls on one resource
// (each with its own loop operation, as every call has one) made one wave each and a quadratic
// number of set entries. With limits.max_calls_per_turn raised to 4,000 (it has no maximum), a
// parallel turn of 4,000 reads of one file held the replica's event loop 8.4 s (0.4 s in sequential
// mode); planning 8,000 took ~79 s and ~960 MB. The plan itself is unchanged: a model of the rule
// (below) agrees with it on every turn.

const TOOLS: Record<string, WaveToolInfo> = {
  read: { concurrencySafe: true, resourceKey: '/path' },
  fetch: { concurrencySafe: true, resourceKey: '' },
  write: { concurrencySafe: false, resourceKey: '/path' },
};
const lookup = (name: string) => TOOLS[name];
/** Keys and operations as a test writes them: `{"keys": [...], "ops": [...]}`. */
const field = (name: 'keys' | 'ops') => (call: PlannedCall) => (JSON.parse(call.arguments) as Record<string, string[] | undefined>)[name];
const keysOf = field('keys');
const opsOf = field('ops');

/**
 * The rule as DESIGN section 3 states it, tested wave by wave: an unsafe or unknown call opens a
 * wave of its own and closes every wave before it; a safe call joins the earliest open wave that
 * holds none of its keys and operations, and the open waves up to it then hold them all.
 */
function modelPlan(calls: readonly PlannedCall[]): number[][] {
  const waves: { calls: number[]; held: Set<string> }[] = [];
  let firstOpen = 0;
  calls.forEach((call, index) => {
    if (!lookup(call.name)?.concurrencySafe) {
      waves.push({ calls: [index], held: new Set() });
      firstOpen = waves.length;
      return;
    }
    const items = [...(keysOf(call) ?? []).map((k) => `k${k}`), ...(opsOf(call) ?? []).map((o) => `o${o}`)];
    let at = firstOpen;
    while (at < waves.length && items.some((item) => waves[at]!.held.has(item))) at++;
    if (at === waves.length) waves.push({ calls: [], held: new Set() });
    waves[at]!.calls.push(index);
    for (let w = firstOpen; w <= at; w++) for (const item of items) waves[w]!.held.add(item);
  });
  return waves.map((w) => w.calls);
}

test('the plan follows the rule on random turns: keys and operations, several per call, unsafe calls between', () => {
  const items = fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { maxLength: 3 });
  const callArb = fc.record({ name: fc.constantFrom('read', 'read', 'read', 'fetch', 'write', 'nope'), keys: items, ops: items }).map(({ name, keys, ops }): PlannedCall => ({ name, arguments: JSON.stringify({ keys, ops }) }));
  fc.assert(
    fc.property(fc.array(callArb, { maxLength: 30 }), (calls) => {
      expect(planWaves(calls, lookup, keysOf, opsOf).map((w) => w.calls)).toEqual(modelPlan(calls));
    }),
    { numRuns: 500 },
  );
});

test('4,000 calls on one resource, each with its own loop operation, are planned in linear time', () => {
  const turn = (length: number): PlannedCall[] => Array.from({ length }, (_, n): PlannedCall => ({ name: 'read', arguments: JSON.stringify({ keys: ['/etc/app.conf'], ops: [`read ${n}`] }) }));
  const calls = turn(4_000);
  const quarter = turn(1_000);
  let waves: (readonly number[])[] = [];
  // Before: ~7,000-8,700 ms of CPU; now tens of ms (the arguments are parsed twice per call here).
  // Past 500 ms, held to 8x a turn a quarter as long (a quadratic plan takes 16x).
  const plan = (turnCalls: readonly PlannedCall[]) => planWaves(turnCalls, lookup, keysOf, opsOf).map((w) => w.calls);
  expect(slowerThan(() => (waves = plan(calls)), () => plan(quarter), 8, 500)).toBeUndefined();
  // One wave each, in request order.
  expect(waves).toEqual(calls.map((_, n) => [n]));
});
