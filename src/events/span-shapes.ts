import { SpanKind, type Attributes } from '@opentelemetry/api';
import { EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import { redactSecrets } from '../middleware';
import type { ApprovalDecision, ApprovalRequest, AttemptOutcome, CallInfo, TurnInfo } from '../pipeline';
import { eventText } from './event-bounds';
import { targetOfEffect, type AttemptTarget } from './attempt-target';
import { ATTR, EXECUTE_TOOL, OUTCOME_OK, RPC_METHOD, RPC_SERVICE, TURN_SPAN_NAME } from './span-attributes';
import type { SpanStart } from './span-record';

// The spans of a turn, its calls and their attempts, as both observers (full and lean) make
// them: names, kinds and attributes in one place. Attributes are built only when traced.

/** Tools whose span names are kept once built; names of further tools are built per call. */
const MAX_NAMED_TOOLS = 1024;

/**
 * Longest tool name whose span names are kept: registered names are at most 128 characters
 * (registry/validate-spec.ts). Longer ones are made up, and are built per call.
 */
const MAX_NAMED_TOOL_CHARS = 128;

/**
 * Span names by tool, built once. A name built per call is a cons string, which the OTLP encoder
 * then reads char by char at several times the cost of a flat one: measured at a third of the
 * encoding of a traced call's three spans (2.3 of 7.1-7.5 µs, in a loop of the encoder alone).
 */
class SpanNames {
  private readonly names = new Map<string, string>();

  constructor(private readonly prefix: string) {}

  of(tool: string): string {
    let name = this.names.get(tool);
    if (name === undefined) {
      name = `${this.prefix} ${tool}`;
      if (this.names.size < MAX_NAMED_TOOLS && tool.length <= MAX_NAMED_TOOL_CHARS) this.names.set(tool, name);
    }
    return name;
  }
}

const CALL_NAMES = new SpanNames(EXECUTE_TOOL);
const ATTEMPT_NAMES = new SpanNames('tool_attempt');

/** The turn's span: the server side of the Dispatch RPC, with the gRPC semantic conventions' `rpc.*` attributes. */
export const turnSpan = (info: TurnInfo, startMs: number, traced: boolean): SpanStart => ({
  name: TURN_SPAN_NAME,
  kind: SpanKind.SERVER,
  startMs,
  parent: true,
  attributes: traced
    ? { [ATTR.rpcSystem]: 'grpc', [ATTR.rpcService]: RPC_SERVICE, [ATTR.rpcMethod]: RPC_METHOD, [ATTR.tenant]: info.tenant, [ATTR.sessionId]: info.sessionId, [ATTR.turn]: info.turn, [ATTR.calls]: info.callCount }
    : undefined,
});

export const turnEnding = (hardError: string | undefined): Attributes | undefined => (hardError ? { [ATTR.outcome]: hardError, [ATTR.errorType]: hardError } : undefined);

export const callSpan = (info: CallInfo, startMs: number, traced: boolean): SpanStart => ({
  // A made-up name is no operation of its own (gen_ai.tool.name keeps it): traces stay bounded as metrics do.
  name: info.unknown === true ? EXECUTE_TOOL : CALL_NAMES.of(info.tool),
  kind: SpanKind.INTERNAL,
  startMs,
  parent: true,
  attributes: traced ? { [ATTR.operationName]: EXECUTE_TOOL, [ATTR.toolName]: info.tool, [ATTR.toolCallId]: info.toolCallId } : undefined,
});

export const callEnding = (errorType: string | undefined, attempts: number): Attributes => ({ [ATTR.outcome]: errorType ?? OUTCOME_OK, [ATTR.attempts]: attempts, [ATTR.errorType]: errorType });

/**
 * An attempt's span; it names its tool only when a fallback ran instead of the requested one. With
 * its tool's target (attempt-target.ts) its kind and attributes are the target's (INTERNAL for a
 * builtin; an HTTP tool's HTTP client attributes), shared; with an effect alone, CLIENT.
 */
export function attemptSpan(attempt: number, tool: string, requested: string, target: AttemptTarget | string, startMs: number, traced: boolean): SpanStart {
  const kind = typeof target === 'string' ? SpanKind.CLIENT : target.kind;
  if (!traced) return { name: ATTEMPT_NAMES.of(tool), kind, startMs, attributes: undefined };
  const shared = typeof target === 'string' ? targetOfEffect(tool, target) : target;
  return { name: ATTEMPT_NAMES.of(tool), kind, startMs, attributes: shared.attributes(attempt, tool !== requested) };
}

/**
 * How an attempt ended, for its span (`span`) or its TOOL_POST: an outcome, or the hard error that
 * left it open. The span has the HTTP status its tool answered, success too (the HTTP client
 * semantic conventions); TOOL_POST a failure's only, as `dispatchctl events` has always shown it.
 */
export const attemptEnding = (outcome: AttemptOutcome | undefined, errorType: string | undefined, tool: string, span: boolean) => ({
  [ATTR.outcome]: errorType ?? OUTCOME_OK,
  [ATTR.errorType]: errorType,
  [ATTR.replay]: outcome?.replay ?? false,
  [ATTR.cached]: outcome?.cached ?? false,
  [ATTR.truncated]: outcome?.truncated ?? false,
  [ATTR.resolvedTool]: outcome && outcome.resolvedTool !== tool ? outcome.resolvedTool : undefined,
  // Why it failed without its words (a tool's answer may hold payload): when, and the HTTP status.
  [ATTR.errorPhase]: outcome?.errorPhase,
  [ATTR.httpStatus]: span ? (outcome?.answeredStatus ?? outcome?.httpStatus) : outcome?.httpStatus,
  [ATTR.policy]: outcome?.policy,
});

/** The name of a point event on a span (`retry`, `loop_stop`, ...). */
export const pointName = (kind: EventKind): string => EventKind[kind].toLowerCase();

export const retryPoint = (delayMs: number, reason: string): Record<string, string> => ({ [ATTR.retryDelayMs]: String(delayMs), [ATTR.reason]: eventText(redactSecrets(reason)) });
export const messagePoint = (message: string): Record<string, string> => ({ [ATTR.message]: eventText(message) });
/**
 * An approval's point event as spans carry it: its id, reason and whether a policy changed the
 * arguments; never their values (spans are exported: docs/security.md).
 */
export function approvalPoint(approvalId: string, reason: string, request?: ApprovalRequest): Record<string, string> {
  const attributes: Record<string, string> = { [ATTR.approvalId]: approvalId, [ATTR.reason]: eventText(redactSecrets(reason)) };
  if (request) attributes[ATTR.argumentsModified] = String(request.argumentsModified);
  return attributes;
}

/**
 * An approval's end as its APPROVAL_RESOLVED and span point carry it: its id, the decision, the
 * approver's reason (bounded and escaped by ResolveApproval; redacted and cut as a retry's) and
 * the tenant that decided, when a ResolveApproval did.
 */
export function approvalResolvedPoint(approvalId: string, decision: ApprovalDecision): Record<string, string> {
  const attributes: Record<string, string> = { [ATTR.approvalId]: approvalId, [ATTR.approvalDecision]: decision.decision };
  if (decision.reason !== undefined && decision.reason !== '') attributes[ATTR.reason] = eventText(redactSecrets(decision.reason));
  if (decision.decidedBy !== undefined) attributes[ATTR.approvalDecidedBy] = eventText(decision.decidedBy);
  return attributes;
}

/** What APPROVAL_REQUESTED carries to subscribers beyond its span's point: the arguments that run if approved (already redacted). */
export const approvalArgumentsPoint = (request: ApprovalRequest | undefined): Record<string, string> | undefined => (request ? { [ATTR.argumentsText]: eventText(request.arguments) } : undefined);
