import { status } from '@grpc/grpc-js';
import { DispatchMode, EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp } from '../helpers/servers';
import { describe as seq, ofSession, tapEvents } from './event-tap';

// A hard error in a parallel wave aborts the siblings still running. Their last events (TOOL_POST
// with the hard error) come as they unwind, and the turn's TURN_END after them: no event of a turn
// follows its end, though the RPC answers at once.

const TOOLS = `
tools:
  - { name: sleep, effect: read_only, concurrency_safe: true, input_schema: '{"type":"object"}', builtin: { name: sleep } }
  - { name: loopy, effect: read_only, concurrency_safe: true, input_schema: '{"type":"object"}', loop: { stop_threshold: 1 }, builtin: { name: echo } }
`;

test('a hard error in a wave: every event of the turn comes before its TURN_END', async () => {
  const d = await startApp(TOOLS);
  const tap = await tapEvents(d.address);
  try {
    await d.dispatch.dispatch({ sessionId: 's', turn: 1, calls: [{ id: 'first', name: 'loopy', arguments: '{"q":1}' }] });
    const started = Date.now();
    const error = await d.dispatch
      .dispatch({
        sessionId: 's',
        turn: 2,
        mode: DispatchMode.PARALLEL,
        calls: [
          { id: 'sib-1', name: 'sleep', arguments: '{"ms":3000,"n":1}' },
          { id: 'sib-2', name: 'sleep', arguments: '{"ms":3000,"n":2}' },
          { id: 'again', name: 'loopy', arguments: '{"q":1}' },
        ],
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: status.ABORTED });
    expect(Date.now() - started).toBeLessThan(1_000);
    await tap.waitFor((events) => ofSession(events, 's').some((e) => e.turn === 2 && e.kind === EventKind.TURN_END));
    await new Promise((r) => setTimeout(r, 200));
    const kinds = seq(ofSession(tap.events, 's').filter((e) => e.turn === 2));
    expect(kinds.filter((k) => k.startsWith('TOOL_POST'))).toHaveLength(3);
    expect(kinds.at(-1)).toBe('TURN_END');
  } finally {
    tap.close();
    await d.close();
  }
});
