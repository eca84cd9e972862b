import { LiveSessions, type Expires } from '../../src/store/live-sessions';
import { createMemoryStore, type SessionScope } from '../../src/store';

// LiveSessions told idle sessions by the wall clock: once it stepped back (NTP), the sessions idle
// before looked held until it caught up, so only the tenants' equal shares made room, and a tenant
// over its share lost a session it was using while another's idle ones stayed. Now a steady clock
// (the wall clock moved on by however far it stepped back) tells them: the idle go first.

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = 10 * DAY;

class Session implements Expires {
  heldUntil: number;
  expiresAt: number;
  constructor(readonly tenant: string, t: number) {
    this.heldUntil = t + HOUR;
    this.expiresAt = t + DAY;
  }
}

/** A session used at `t`, as the memory store does: got (at `t`), then its hold moved on. */
function use(live: LiveSessions<Session>, key: string, t: number): void {
  const session = live.get(key, t)!;
  session.heldUntil = t + HOUR;
}

describe('LiveSessions after the wall clock steps back', () => {
  test('room is made with the least recently used session, idle before the step, not one in use', () => {
    const live = new LiveSessions<Session>(10);
    // Tenant a's five sessions, idle for two hours (their hold is an hour) when the clock steps back.
    for (let i = 0; i < 5; i++) live.add(`a${i}`, new Session('a', T0 + i), T0 + i);
    let t = T0 + 2 * HOUR;
    live.add('b0', new Session('b', t), t);
    // The wall clock steps back three hours; tenant b goes on using its sessions.
    t -= 3 * HOUR;
    for (let i = 1; i < 5; i++) live.add(`b${i}`, new Session('b', ++t), t);
    use(live, 'b0', ++t);
    use(live, 'a4', ++t);
    // Full: room for a tenth is made. Before, a's sessions looked held (their hold ends two hours
    // ahead of the clock now): each tenant was cut to 4, and b lost b1, in use a moment ago.
    live.add('b5', new Session('b', ++t), t);
    const kept = ['a0', 'a1', 'a2', 'a3', 'a4', 'b0', 'b1', 'b2', 'b3', 'b4', 'b5'].filter((key) => live.get(key) !== undefined);
    expect(kept).toEqual(['a1', 'a2', 'a3', 'a4', 'b0', 'b1', 'b2', 'b3', 'b4', 'b5']);
    // The next ones go least recently used first too: a1, a2, a3 (a4 was used after the step).
    for (let i = 6; i < 9; i++) live.add(`b${i}`, new Session('b', ++t), t);
    expect(['a1', 'a2', 'a3', 'a4'].filter((key) => live.get(key) !== undefined)).toEqual(['a4']);
    expect(live.size).toBe(10);
  });

  test('with no step back, idleness reads as before: a session idle past its hold goes first', () => {
    const live = new LiveSessions<Session>(2);
    live.add('x', new Session('a', T0), T0);
    live.add('y', new Session('b', T0 + 1), T0 + 1);
    use(live, 'x', T0 + 2);
    // y is idle past its hold, x is not: y goes, though each tenant holds one.
    live.add('z', new Session('c', T0 + HOUR + 10), T0 + HOUR + 10);
    expect(['x', 'y', 'z'].filter((key) => live.get(key) !== undefined)).toEqual(['x', 'z']);
  });
});

describe('memory store after the wall clock steps back', () => {
  const of = (tenant: string, sessionId: string): SessionScope => ({ tenant, sessionId });
  const remember = (store: ReturnType<typeof createMemoryStore>, scope: SessionScope) =>
    store.finishAttempt({ scope, op: 'op', memory: { entry: scope.sessionId, max: 10, ttlSeconds: 86_400 } });

  test('a session in use is kept, the idle one goes', async () => {
    let clock = T0;
    const store = createMemoryStore({ maxSessions: 10, sessionHoldSeconds: 3600, now: () => clock });
    for (let i = 0; i < 5; i++) await remember(store, of('a', `a${i}`));
    clock = T0 + 2 * HOUR;
    await remember(store, of('b', 'b0'));
    clock -= 3 * HOUR;
    for (let i = 1; i < 6; i++) {
      clock += 1000;
      await remember(store, of('b', `b${i}`));
    }
    const kept: string[] = [];
    for (const [tenant, id] of [...[0, 1, 2, 3, 4].map((i) => ['a', `a${i}`]), ...[0, 1, 2, 3, 4, 5].map((i) => ['b', `b${i}`])] as const) {
      if ((await store.memory(of(tenant, id))).length > 0) kept.push(id);
    }
    expect(kept).toEqual(['a1', 'a2', 'a3', 'a4', 'b0', 'b1', 'b2', 'b3', 'b4', 'b5']);
    await store.close();
  });
});
