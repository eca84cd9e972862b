import { randomUUID } from 'node:crypto';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../errors';
import { nestsDeeper } from '../json';
import { formatValidationErrors } from '../arguments/validation-message';
import { chargeChecksTo, type ResolvedTool } from '../registry';
import type { PipelineDeps, TurnContext } from './pipeline-deps';
import type { HookDecision, PreHookInput } from './guards';
import type { CallObserver } from './observer';
import { toAbortSignal } from './signals';
import { onSessionEnded } from './session-end-waits';
import { cancelledByDeadline, waitSignal } from './turn-error';
import { recordGone, unlessRecorded } from './answered-by-record';
import { approvalArguments, approvalText, type ApprovalDecision, type ApprovalRequest } from './approval-request';
import { markRefusal } from './refused-loops';
import { DEADLINE_UNANSWERED, deadlineWait } from './approval-deadline';

const blocked = (message: string) =>
  new DispatchError(ErrorKind.BLOCKED, message, { phase: 'before', suggestion: 'Do not retry this call; choose a different action or ask the user for permission.' });

/** A refusal of the call as it is, which the loop window records when the model sends it again (markRefusal). */
const refused = (message: string, by?: string) => markRefusal(blocked(message), by);

/**
 * The refusal of a call whose policy could not be consulted for now (`reason`: why): UNAVAILABLE,
 * recoverable, told to call again after the tool's loop.assumed_wait_ms, as any failure before the
 * tool ran that asks to be called again later without knowing when. Not retried within the turn:
 * each consult waited up to the endpoint's timeout already, and retries would multiply a failing
 * dependency's wait into every call. Before, it was BLOCKED "do not retry", as a decision to
 * refuse: a passing outage of the policy service read to the model as a permanent refusal.
 */
const policyUnavailable = (tool: ResolvedTool, reason: string) =>
  new DispatchError(ErrorKind.UNAVAILABLE, `${reason}, so the call was not executed`, {
    phase: 'before',
    recoverable: true,
    retryAfterMs: tool.loop.assumedWaitMs,
    notRetriedWithinTurn: true,
    suggestion: `The service that decides whether this call may run did not answer; it was not executed. Call it again in ${tool.loop.assumedWaitMs} ms or later, or do something else first.`,
  });

/** The suggestion of an Ask refused because too many approvals wait on this replica. */
const APPROVALS_FULL = 'Call it again in a while, when fewer approvals are waiting, or do something else first.';

/**
 * The suggestion of an Ask nobody answered within the approval timeout: no refusal (a denial's is
 * "do not retry"), so the model may ask again, but each call waits for an approver again.
 */
const UNANSWERED =
  'Nobody approved or denied this call, so it was not refused: tell the user this action needs someone to approve it; calling it again asks for approval again (and waits again), so call it again once an approver is ready.';

/** A time in ms as the model reads it: `120 s`, `1.5 s`. */
const seconds = (ms: number): string => `${Number((ms / 1000).toFixed(3))} s`;

/**
 * Step 2 of an attempt: pre-tool hooks and policy. Gives the arguments to run with (a Modify
 * makes a new object, validated again) or throws BLOCKED; synchronously when the hooks answer
 * synchronously and nobody is asked, so a call without policies awaits nothing here. A
 * side-effecting call they would refuse or ask about whose idempotency record exists (it ran
 * already) gives an AnsweredByRecord instead: the store step answers it (see unlessRecorded).
 * `beforeAsk`, when given, runs before an approver is asked, with the arguments that would run:
 * the session budget's count, the loop block's read and the breaker gate (readyToAsk), whose refusal ends
 * the attempt unasked, the count given back when the wait ends without approval. `keyTool`: the
 * tool whose idempotency key the attempt's claim takes (keyToolOf), which its record is looked up by.
 */
export function applyPreHooks(deps: PipelineDeps, turn: TurnContext, obs: CallObserver, callId: string, tool: ResolvedTool, args: unknown, attempt: number, beforeAsk?: BeforeAsk, keyTool = tool): unknown {
  const decision = deps.guards.preHook(new HookInput(turn, tool, args, attempt));
  return decision instanceof Promise ? decision.then((d) => decide(deps, turn, obs, callId, tool, args, attempt, d, beforeAsk, keyTool)) : decide(deps, turn, obs, callId, tool, args, attempt, decision, beforeAsk, keyTool);
}

/**
 * A step before an approval is asked for (see applyPreHooks); it throws to refuse the call unasked,
 * and gives what undoes it, if anything, when the approval is not granted.
 */
export type BeforeAsk = (ready: unknown) => Promise<GiveBack | undefined>;

/** Undoes a BeforeAsk step (gives its budget count back) once a wait ended without approval; never rejects. */
export type GiveBack = () => Promise<void>;

/** What a pre-tool hook sees; the signal's getter is on the prototype (no closure per attempt). */
class HookInput implements PreHookInput {
  readonly tenant: string;
  readonly sessionId: string;

  constructor(
    private readonly turn: TurnContext,
    readonly tool: ResolvedTool,
    readonly args: unknown,
    readonly attempt: number,
  ) {
    this.tenant = turn.tenant;
    this.sessionId = turn.sessionId;
  }

  /** A real AbortSignal for the turn, made only when a hook asks. */
  get signal(): AbortSignal {
    return toAbortSignal(this.turn.signal);
  }
}

/** What a hook decision means for the attempt: its arguments, a BLOCKED throw, or an approval wait. */
function decide(deps: PipelineDeps, turn: TurnContext, obs: CallObserver, callId: string, tool: ResolvedTool, args: unknown, attempt: number, decision: HookDecision, beforeAsk: BeforeAsk | undefined, keyTool: ResolvedTool): unknown {
  // Aborted while a hook or the policy endpoint was consulted: its answer is moot, and a block is
  // most likely the consult's own abort (the endpoint fails closed). The attempt is refused
  // CANCELLED before any store step or tool, as after an approval wait cut short (see awaitApproval).
  if (turn.signal.aborted) return args;
  switch (decision.action) {
    case 'allow':
      return args;
    case 'block': {
      const refusal = decision.unavailable ? policyUnavailable(tool, decision.reason) : refused(`blocked by policy: ${decision.reason}`, decision.by);
      if (tool.readOnly) throw refusal;
      return unlessRecorded(deps, turn, keyTool, args, args, refusal);
    }
    case 'modify':
      checkModified(deps, turn.tenant, tool, decision.arguments);
      return decision.arguments;
    case 'ask': {
      if (decision.arguments !== undefined) checkModified(deps, turn.tenant, tool, decision.arguments);
      const ready = decision.arguments ?? args;
      const headless = turn.interactive ? undefined : refused(`needs approval, and this dispatch is headless: ${decision.reason}`);
      // What the approver is shown: the arguments that run if approved, and whether a policy changed them.
      const ask = () => {
        const request: ApprovalRequest = { sessionId: turn.sessionId, toolCallId: callId, tool: tool.name, arguments: approvalArguments(ready), argumentsModified: decision.arguments !== undefined, reason: approvalText(decision.reason), endsBy: turn.deadline };
        // A call its session budget, loop block or breaker refuses is refused before anyone is asked about it.
        return beforeAsk ? beforeAsk(ready).then((giveBack) => awaitApproval(deps, turn, obs, attempt, decision.reason, request, ready, giveBack)) : awaitApproval(deps, turn, obs, attempt, decision.reason, request, ready);
      };
      // A side-effecting call that ran already (a client's retry) is answered from its record, unasked.
      if (!tool.readOnly) return unlessRecorded(deps, turn, keyTool, ready, ready, headless ?? recordGone(decision.reason), headless ? undefined : ask);
      if (headless) throw headless;
      return ask();
    }
  }
}

/**
 * Throws BLOCKED when arguments a policy or hook made (a rule's `modify`, a hook's, the policy
 * endpoint's answer) are not ones the call may run with: nesting past limits.maxArgumentDepth, as
 * the model's are refused (the store's key and the events walk them recursively: an endpoint's
 * 5,000 levels ended the whole turn INTERNAL), or refused by the tool's schema.
 */
function checkModified(deps: PipelineDeps, tenant: string, tool: ResolvedTool, args: unknown): void {
  const max = deps.limits.maxArgumentDepth;
  if (nestsDeeper(args, max)) throw refused(`a policy modified the arguments into ones nesting deeper than ${max} levels (limits.max_argument_depth)`);
  chargeChecksTo(tenant);
  // Said as a model's arguments are (the field and what is wrong): "must NOT have additional properties" named neither.
  if (!tool.validate(args)) throw refused(`a policy modified the arguments into ones the schema refuses (${formatValidationErrors(tool.validate.errors ?? [], 3, tool.schema)})`);
}

/**
 * How an announced wait ended, for APPROVAL_RESOLVED. One the turn's signal cut short within the
 * deadline's slack is the deadline's, as turnError names it DEADLINE_EXCEEDED (the client's own
 * deadline cancels first): expired, as its expiresAt said. Guards that do not say how (not
 * createApprovals) are read by what the wait gave.
 */
function waitEnding(turn: TurnContext, approved: boolean, decision: ApprovalDecision | undefined, cutShort: boolean): ApprovalDecision {
  if (decision !== undefined && decision.decision !== 'cancelled') return decision;
  if (!approved && turn.signal.aborted && cancelledByDeadline(Date.now(), turn.deadline, turn.received)) return { decision: 'expired' };
  return decision ?? { decision: approved ? 'approved' : cutShort ? 'cancelled' : 'denied' };
}

async function awaitApproval(deps: PipelineDeps, turn: TurnContext, obs: CallObserver, attempt: number, reason: string, request: ApprovalRequest, args: unknown, giveBack?: GiveBack): Promise<unknown> {
  const approvalId = randomUUID();
  // Announced once the wait is taken: an approver never sees the id of an ask refused at once.
  let asked = false;
  // With a shared store, dispatchd's drain ends the wait too (see waitSignal); the approval is
  // then gone, and a later ResolveApproval of it answers resolved=false, as after a timeout.
  const wait = waitSignal(turn);
  // EndSession refuses the session's pending approvals, here and (a shared store) on every replica.
  const sessionEnd = new AbortController();
  const stopEnd = onSessionEnded(deps.store, turn.scope ?? { tenant: turn.tenant, sessionId: turn.sessionId }, () => sessionEnd.abort());
  let approved = false;
  const beforeDeadline = deadlineWait(turn.deadline, deps.limits.approvalTimeoutMs);
  // Listed as ending when it does: a margin before the deadline.
  const asking = beforeDeadline ? { ...request, endsBy: Date.now() + beforeDeadline.givenMs } : request;
  // How the wait ended: with a denial, what the approver said (ResolveApproval's reason, bounded and escaped there).
  let decision: ApprovalDecision | undefined;
  try {
    const signal = AbortSignal.any([toAbortSignal(wait.signal), sessionEnd.signal, ...(beforeDeadline ? [beforeDeadline.signal] : [])]);
    const waiting = () => {
      asked = true;
      obs.approvalRequested(attempt, approvalId, reason, asking);
    };
    approved = await deps.guards.awaitApproval(approvalId, signal, turn.tenant, waiting, asking, (ended) => (decision = ended));
  } finally {
    wait.stop();
    stopEnd();
    beforeDeadline?.stop();
    // Not granted, however the wait ended (denied, expired, cut short, the session's end, no room
    // to wait): what was counted before asking is given back, before the attempt ends.
    if (!approved && giveBack) await giveBack();
  }
  // Every announced wait is told ended (one refused at once, or cut short before it was announced, was never asked).
  const deadlineCut = !approved && beforeDeadline?.signal.aborted === true && !wait.signal.aborted && !sessionEnd.signal.aborted;
  if (asked) obs.approvalResolved(attempt, approvalId, deadlineCut ? { decision: 'expired' } : waitEnding(turn, approved, decision, wait.signal.aborted || sessionEnd.signal.aborted));
  const said = decision?.decision === 'denied' ? decision.reason : undefined;
  if (!approved && sessionEnd.signal.aborted && !wait.signal.aborted) throw blocked(`the session ended while the call waited for approval, so it was not executed: ${reason}`);
  // Cut short by the client's cancel, the deadline, shutdown's abort or the drain: no refusal (it
  // said BLOCKED "not granted"). The attempt's resource, slot and turn refuse an aborted turn, and
  // its check comes before any store step and its tool (run-attempt: "Aborted while its hooks..."):
  // each throws HardError CANCELLED, which turnError names, or SHUTTING_DOWN. One thrown here
  // would be taken for the hook's own failure (UNEXPECTED, the turn going on).
  if (!approved && wait.signal.aborted) return args;
  // Refused for want of room, as a concurrency cap refuses: the same call may be asked later.
  if (!asked) throw new DispatchError(ErrorKind.UNAVAILABLE, `needs approval, and too many approvals are waiting already; try again later: ${reason}`, { phase: 'before', recoverable: true, suggestion: APPROVALS_FULL });
  if (deadlineCut) {
    throw new DispatchError(ErrorKind.BLOCKED, `approval was not given within the ${seconds(beforeDeadline!.givenMs)} this turn's deadline left for it (the approval timeout is ${seconds(deps.limits.approvalTimeoutMs)}), so the call was not executed: ${reason}`, { phase: 'before', suggestion: DEADLINE_UNANSWERED });
  }
  // Its time ran out unanswered (the approval timeout: an expiry by the deadline was cut short above).
  if (!approved && decision?.decision === 'expired') {
    throw new DispatchError(ErrorKind.BLOCKED, `approval timed out: no approver answered within ${seconds(deps.limits.approvalTimeoutMs)}, so the call was not executed: ${reason}`, { phase: 'before', suggestion: UNANSWERED });
  }
  // The approver's words redacted as its event shows them: the model reads this (a pasted password).
  if (!approved) throw refused(`approval was not granted: ${reason}${said === undefined ? '' : `; the approver said: ${approvalText(said)}`}`);
  return args;
}
