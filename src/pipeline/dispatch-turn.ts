import type { DispatchRequest, ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { HardError } from '../errors';
import { executeCall } from './execute-call';
import type { PipelineDeps, TurnContext } from './pipeline-deps';

/** Runs a turn's calls one after another, checking for cancellation between calls. */
export async function dispatchSequential(deps: PipelineDeps, turn: TurnContext, request: DispatchRequest): Promise<ToolResult[]> {
  const results: ToolResult[] = [];
  for (const call of request.calls) {
    if (turn.signal.aborted) throw HardError.cancelled();
    const obs = turn.observer.call({ toolCallId: call.id, tool: call.name, arguments: call.arguments });
    try {
      const result = await executeCall(deps, turn, call, obs);
      obs.end(result);
      results.push(result);
    } catch (error) {
      obs.end(undefined, error instanceof HardError ? error.reason : 'INTERNAL');
      throw error;
    }
  }
  return results;
}
