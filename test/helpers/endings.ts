import { NOOP_OBSERVER, type CallObserver, type Observer } from '../../src/pipeline';

/** An observer recording how each call and the turn ended: `<call> ok|error|<hard error>`, `turn ok|<hard error>`. */
export function endings(): { observer: Observer; ends: string[] } {
  const ends: string[] = [];
  const noopCall = NOOP_OBSERVER.turn({ tenant: '', sessionId: '', turn: 0, callCount: 0 }).call({ toolCallId: '', tool: '', arguments: '' });
  const observer: Observer = {
    turn: () => ({
      call: (info): CallObserver => ({ ...noopCall, end: (result, hardError) => void ends.push(`${info.toolCallId} ${hardError ?? (result?.isError ? 'error' : 'ok')}`) }),
      end: (hardError) => void ends.push(`turn ${hardError ?? 'ok'}`),
    }),
    breakerState() {},
  };
  return { observer, ends };
}
