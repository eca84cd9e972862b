import { EventKind, type DispatchResponse } from '../../gen/dispatch/v1/dispatch_pb';
import type { TestDispatch } from './servers';

/**
 * Dispatches a turn of one `sleep` call of `ms` in session `sessionId`, and resolves once the
 * call has started (its TOOL_PRE event): the turn then holds a slot of limits.max_turns_in_flight.
 * `done` is the turn's response.
 */
export async function turnInFlight(t: TestDispatch, sessionId: string, ms: number): Promise<{ done: Promise<DispatchResponse> }> {
  const events = t.dispatch.subscribe({ sessionId });
  const started = new Promise<void>((resolve) => events.on('data', (e: { kind: EventKind }) => e.kind === EventKind.TOOL_PRE && resolve()));
  events.on('error', () => undefined);
  try {
    await new Promise((resolve) => events.once('metadata', resolve));
    const done = t.dispatch.dispatch({ sessionId, calls: [{ id: 'held', name: 'sleep', arguments: JSON.stringify({ ms }) }] });
    await started;
    return { done };
  } finally {
    events.cancel();
  }
}
