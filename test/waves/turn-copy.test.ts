import { copyTurn, NOOP_OBSERVER, type TurnContext } from '../../src/pipeline';
import { ResourceLocks } from '../../src/waves';

/** A turn with every field set, none to its default. */
function fullTurn(): TurnContext {
  const signal = new AbortController().signal;
  return {
    tenant: 'acme',
    sessionId: 's1',
    turn: 3,
    signal,
    deadline: 12_345,
    received: 12_000,
    draining: new AbortController().signal,
    shutdown: new AbortController().signal,
    offeredTools: new Set(['echo']),
    interactive: true,
    observer: NOOP_OBSERVER.turn({ tenant: 'acme', sessionId: 's1', turn: 3, callCount: 2 }),
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    tracestate: 'k=v',
    scope: { tenant: 'acme', sessionId: 's1' },
    resources: new ResourceLocks(),
    toldWaits: new Set(['echo\u0000{}']),
  };
}

describe('copyTurn', () => {
  it('copies every field of the turn but the signal and resources it is given, as a spread did', () => {
    const turn = fullTurn();
    const signal = new AbortController().signal;
    const resources = new ResourceLocks();
    const copy = copyTurn(turn, signal, resources);
    expect(copy).toEqual({ ...turn, signal, resources });
    expect(copy.signal).toBe(signal);
    expect(copy.resources).toBe(resources);
  });

  it('shares the turn-wide objects, the told waits included, with the turn', () => {
    const turn = fullTurn();
    const copy = copyTurn(turn, turn.signal, undefined);
    expect(copy.toldWaits).toBe(turn.toldWaits);
    expect(copy.scope).toBe(turn.scope);
    expect(copy.observer).toBe(turn.observer);
    expect(copy.resources).toBeUndefined();
  });
});
