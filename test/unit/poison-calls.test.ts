import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../../src/errors';
import { createPoisonCalls, MAX_POISON_ENTRIES, POISON_WINDOW_MS } from '../../src/executors/worker/poison-calls';
import { SILENT_LOGGER } from '../../src/log';

const gone = () => new DispatchError(ErrorKind.UNAVAILABLE, 'gone', { phase: 'during' });
const call = { tool: 't', args: '{"x":1}' };
const crash = { why: 'disconnected', byWorker: true };

describe('createPoisonCalls', () => {
  let clock = 0;
  const poison = () => createPoisonCalls(SILENT_LOGGER, () => clock);
  beforeEach(() => (clock = 1_000_000));

  it('keeps arguments out at their second stop, by tenant, tool and arguments, until the window from that stop ends', () => {
    const p = poison();
    expect(p.stopped('ten', 'w1', call, crash, gone).kind).toBe(ErrorKind.UNAVAILABLE);
    expect(p.keptOut('ten', call)).toBeUndefined();
    clock += POISON_WINDOW_MS - 1;
    expect(p.stopped('ten', 'w2', call, { why: 'sent no heartbeat for 15000 ms', hung: true }, gone)).toMatchObject({ kind: ErrorKind.UNEXPECTED, recoverable: false, phase: 'during' });
    expect(p.keptOut('ten', call)).toMatchObject({ kind: ErrorKind.UNEXPECTED, phase: 'before', recoverable: false, notTheTool: true });
    expect(p.keptOut('other', call)).toBeUndefined();
    expect(p.keptOut('ten', { tool: 'u', args: call.args })).toBeUndefined();
    expect(p.keptOut('ten', { tool: 't', args: '{"x":2}' })).toBeUndefined();
    clock += POISON_WINDOW_MS - 1;
    expect(p.keptOut('ten', call)?.message).toContain('for 1 more seconds');
    clock += 1;
    expect(p.keptOut('ten', call)).toBeUndefined();
  });

  it('forgets a stop past the window: two stops 10 minutes apart keep nothing out', () => {
    const p = poison();
    p.stopped('ten', 'w1', call, crash, gone);
    clock += POISON_WINDOW_MS;
    expect(p.stopped('ten', 'w2', call, crash, gone).kind).toBe(ErrorKind.UNAVAILABLE);
    expect(p.keptOut('ten', call)).toBeUndefined();
  });

  it('counts only a stop by the worker (lost, reset) or its silence, not one dispatch made or a half-close', () => {
    const p = poison();
    for (const reason of [{ why: 'disconnected' }, { why: 'was disconnected by shutdown' }, { why: 'sent a message dispatch could not decode', recoverable: false }]) {
      expect(p.stopped('ten', 'w', call, reason, gone).kind).toBe(ErrorKind.UNAVAILABLE);
    }
    expect(p.keptOut('ten', call)).toBeUndefined();
  });

  it(`remembers at most ${MAX_POISON_ENTRIES} arguments, forgetting the oldest`, () => {
    const p = poison();
    p.stopped('ten', 'w', { tool: 't', args: 'first' }, crash, gone);
    p.stopped('ten', 'w', { tool: 't', args: 'first' }, crash, gone);
    for (let i = 0; i < MAX_POISON_ENTRIES; i++) p.stopped('ten', 'w', { tool: 't', args: String(i) }, crash, gone);
    expect(p.keptOut('ten', { tool: 't', args: 'first' })).toBeUndefined();
    p.stopped('ten', 'w', { tool: 't', args: String(MAX_POISON_ENTRIES - 1) }, crash, gone);
    expect(p.keptOut('ten', { tool: 't', args: String(MAX_POISON_ENTRIES - 1) })).toBeDefined();
  });
});
