import { planWaves, type PlannedCall, type WaveToolInfo } from '../../src/waves';

// A call may name several resources (its tool's key and its fallbacks' keys): it joins the
// earliest open wave that holds none of them, and holds all of them there.

const TOOLS: Record<string, WaveToolInfo> = {
  read: { concurrencySafe: true, resourceKey: '/path' },
  fetch: { concurrencySafe: true, resourceKey: '' },
};
const lookup = (name: string) => TOOLS[name];
const call = (name: string, args: object): PlannedCall => ({ name, arguments: JSON.stringify(args) });
const keysOf = (c: PlannedCall) => (JSON.parse(c.arguments) as { keys?: string[] }).keys;

test('a call with several keys waits for a wave free of all of them, and later calls on any of them wait for it', () => {
  const calls = [
    call('read', { keys: ['a'] }),
    call('read', { keys: ['b', 'a'] }),
    call('read', { keys: ['b'] }),
    call('read', { keys: ['c'] }),
    call('fetch', { keys: [] }),
  ];
  expect(planWaves(calls, lookup, keysOf).map((w) => w.calls)).toEqual([[0, 3, 4], [1], [2]]);
});

test('a call whose keys are all new joins the first wave', () => {
  const calls = [call('read', { keys: ['a'] }), call('read', { keys: ['b', 'c'] }), call('read', { keys: ['c'] })];
  expect(planWaves(calls, lookup, keysOf).map((w) => w.calls)).toEqual([[0, 1], [2]]);
});
