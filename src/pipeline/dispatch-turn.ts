import type { DispatchRequest, ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { HardError } from '../errors';
import { executeCall } from './execute-call';
import type { PipelineDeps, TurnContext } from './pipeline-deps';
import { checkMayStart, turnError } from './turn-error';

/**
 * Runs a turn's calls one after another, checking for cancellation between calls. A hard error
 * ends the call it came from with its reason (a cancellation by the deadline: DEADLINE_EXCEEDED).
 * Once dispatchd drains, no call starts: the turn ends SHUTTING_DOWN, so the client retries it
 * on another replica (where the calls that ran are replayed), and the calls not reached have no
 * events, as after a cancellation.
 */
export async function dispatchSequential(deps: PipelineDeps, turn: TurnContext, request: DispatchRequest): Promise<ToolResult[]> {
  const results: ToolResult[] = [];
  for (const call of request.calls) {
    checkMayStart(turn);
    const obs = turn.observer.call({ toolCallId: call.id, tool: call.name, arguments: call.arguments, unknown: deps.registry.lookup(turn.tenant, call.name) === undefined });
    try {
      const result = await executeCall(deps, turn, call, obs);
      obs.end(result);
      results.push(result);
    } catch (error) {
      const hard = turnError(error, turn.deadline, turn.shutdown, turn.received);
      obs.end(undefined, hard instanceof HardError ? hard.reason : 'INTERNAL');
      throw hard instanceof HardError ? hard.withCompleted(results.map((r, index) => ({ id: r.toolCallId, index }))) : hard;
    }
  }
  return results;
}
