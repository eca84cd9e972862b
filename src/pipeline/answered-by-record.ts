import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../errors';
import type { ResolvedTool } from '../registry';
import { idempotencyKey, type RecordState } from '../store';
import type { PipelineDeps, TurnContext } from './pipeline-deps';
import { storeWarn } from './store-warn';

/**
 * What the pre-tool step gives an attempt that its call's idempotency record answers: a
 * side-effecting call a hook or policy would refuse or ask about, whose identical call ran already
 * (or runs, or was cut off). It goes on to the store step, which answers from the record (a
 * replay, IN_PROGRESS, OUTCOME_UNKNOWN) and runs nothing: asking an approver about, or refusing,
 * a call whose effect is done would tell the model it was not, and a denial could not undo it.
 * `refusal` is what the attempt gets instead should the record be gone when the store step
 * comes (it ended or expired meanwhile): its claim is then given back, and nothing runs unasked.
 */
export class AnsweredByRecord {
  constructor(
    /** The arguments the hooks left (the tool never receives them: the record answers). */
    readonly args: unknown,
    readonly refusal: DispatchError,
  ) {}
}

/**
 * The refusal of an attempt let through for its record when the record is gone by the store
 * step: recoverable, so that its retry, which finds no record, is asked about (or refused) as
 * any call.
 */
export function recordGone(reason: string): DispatchError {
  return new DispatchError(ErrorKind.UNAVAILABLE, `needs approval (${reason}); an identical earlier call's record, which would have answered it, ended while it was checked, so this call was not executed`, {
    phase: 'before',
    recoverable: true,
    suggestion: 'Call it again: it will be asked for approval.',
  });
}

/**
 * Step 2's look for a record of a side-effecting call it would refuse (`refusal`) or ask about
 * (`otherwise`: the approval wait), by the idempotency key under `tool` (keyToolOf's) of
 * `keyArgs` (the arguments as validated, before the hooks: the key the claim takes, see
 * run-attempt): with one, the attempt goes on to the store step to be answered from it
 * (AnsweredByRecord). Only this path reads the store before the claim: a call the hooks let
 * through pays no extra round trip. A store that cannot be read is no record: the call is refused
 * or asked about as before (and a side-effecting call approved then fails closed at the claim).
 */
export async function unlessRecorded(deps: PipelineDeps, turn: TurnContext, tool: ResolvedTool, keyArgs: unknown, ready: unknown, refusal: DispatchError, otherwise?: () => Promise<unknown>): Promise<unknown> {
  let state: RecordState | undefined;
  try {
    const scope = turn.scope ?? { tenant: turn.tenant, sessionId: turn.sessionId };
    state = await deps.store.findRecord(scope, idempotencyKey(scope, tool.name, keyArgs, tool.keyFields));
  } catch (error) {
    storeWarn(deps.logger)('store unavailable for the record of a call a policy refuses or asks about; decided without it', { tool: tool.name, error: (error as Error).message });
  }
  if (state !== undefined) return new AnsweredByRecord(ready, refusal);
  if (otherwise) return otherwise();
  throw refusal;
}
