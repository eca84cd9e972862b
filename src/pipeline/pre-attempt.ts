import { randomUUID } from 'node:crypto';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../errors';
import type { ResolvedTool } from '../registry';
import type { PipelineDeps, TurnContext } from './pipeline-deps';
import type { CallObserver } from './observer';
import { toAbortSignal } from './signals';

const blocked = (message: string) =>
  new DispatchError(ErrorKind.BLOCKED, message, { phase: 'before', suggestion: 'Do not retry this call; choose a different action or ask the user for permission.' });

/**
 * Step 2 of an attempt: pre-tool hooks and policy. Resolves with the arguments to run with
 * (a Modify makes a new object, validated again), or rejects with BLOCKED.
 */
export async function applyPreHooks(deps: PipelineDeps, turn: TurnContext, obs: CallObserver, tool: ResolvedTool, args: unknown, attempt: number): Promise<unknown> {
  const decision = await deps.guards.preHook({ tenant: turn.tenant, sessionId: turn.sessionId, tool, args, attempt, signal: toAbortSignal(turn.signal) });
  switch (decision.action) {
    case 'allow':
      return args;
    case 'block':
      throw blocked(`blocked by policy: ${decision.reason}`);
    case 'modify':
      if (!tool.validate(decision.arguments)) {
        throw blocked(`a policy modified the arguments into ones the schema refuses (${tool.validate.errors?.[0]?.message ?? 'invalid'})`);
      }
      return decision.arguments;
    case 'ask': {
      if (decision.arguments !== undefined && !tool.validate(decision.arguments)) {
        throw blocked(`a policy modified the arguments into ones the schema refuses (${tool.validate.errors?.[0]?.message ?? 'invalid'})`);
      }
      if (!turn.interactive) throw blocked(`needs approval, and this dispatch is headless: ${decision.reason}`);
      const approvalId = randomUUID();
      obs.approvalRequested(attempt, approvalId, decision.reason);
      const approved = await deps.guards.awaitApproval(approvalId, toAbortSignal(turn.signal), turn.tenant);
      if (!approved) throw blocked(`approval was not granted: ${decision.reason}`);
      return decision.arguments ?? args;
    }
  }
}
