import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError, serverTrouble } from '../errors';
import { throttledPerLogger, type Logger } from '../log';
import { redactSecrets } from '../middleware';
import { shortened } from './bound-result';
import { boundedFailure } from './bound-failure';
import { tenantField } from './breaker-key';
import type { PostHookInput } from './guards';
import type { PipelineDeps, TurnContext } from './pipeline-deps';
import type { ResolvedTool } from '../registry';
import type { AttemptResult } from './run-attempt';

// The last steps of an attempt that ran (see run-attempt): its failure, its post hooks' notes, its breaker record.

/** Longest a crash's message is in its error, as a worker's or an MCP tool's error text (characters). */
const MAX_CRASH_MESSAGE = 2_000;
/** Longest a crash's logged stack is (characters). */
const MAX_LOGGED_STACK = 8_000;

/** Each logger's crash log: a tool's crashes are logged at most once per 10 s (a tool crashing on every call would flood it). */
const crashLog = throttledPerLogger({ level: 'error', keyOf: (_, fields) => String(fields?.tool) });

/**
 * The failure of an attempt whose tool (or a middleware around it) threw `thrown`: where every
 * executor's failure enters the call, before its result and record are made. A DispatchError has
 * its message and suggestion held to MAX_ERROR_MESSAGE_CHARS (boundedFailure). Anything else is a
 * crash: UNEXPECTED for the model, its message cut at {@link MAX_CRASH_MESSAGE} (a result is
 * bounded before it enters context), and, as both seeds do, one line at error level for the
 * operator with its stack (secrets redacted; no argument values, DESIGN section 9), at most once
 * per 10 s per tool.
 */
export function thrownFailure(deps: PipelineDeps, tool: string, callId: string, attempt: number, thrown: unknown): DispatchError {
  if (thrown instanceof DispatchError) return boundedFailure(thrown);
  const stack = thrown instanceof Error ? (thrown.stack ?? `${thrown.name}: ${thrown.message}`) : String(thrown);
  crashLog(deps.logger)('a tool crashed; its call ends UNEXPECTED', { tool, tool_call_id: callId, attempt, error: redactSecrets(shortened(stack, MAX_LOGGED_STACK)) });
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  const crash = DispatchError.from(message.length > MAX_CRASH_MESSAGE ? new Error(shortened(message, MAX_CRASH_MESSAGE), { cause: thrown }) : thrown, 'during');
  crashes.add(crash);
  return crash;
}

/** The failures thrownFailure logged as crashes (with their stacks): logToolFailure leaves them. */
const crashes = new WeakSet<DispatchError>();

/** Each logger's tool-failure log, throttled per tool and kind. */
const failureLog = throttledPerLogger({ keyOf: (_, fields) => `${String(fields?.tool)}\0${String(fields?.kind)}` });

/**
 * One warn line for the operator when a tool failed in a way that says something of its health
 * (what {@link countsForBreaker} counts: a timeout, a transport failure, a 5xx): its kind, phase
 * and HTTP status, not its message, which can quote the tool's answer (DESIGN section 9, as
 * TOOL_POST events without debug payloads). At most one line per tool and kind per 10 s, saying
 * how many it held back; failures the model caused (a 4xx, a tool's own error answer) are not
 * logged, nor crashes, which thrownFailure logged with their stacks.
 */
export function logToolFailure(logger: Logger, tool: string, callId: string, attempt: number, error: DispatchError, call?: { readonly tenant: string; readonly sessionId: string }): void {
  if (!countsForBreaker(error) || crashes.has(error)) return;
  const status = error.httpStatus === undefined ? {} : { http_status: error.httpStatus };
  // Whose call (an SRE's probe: the line named no session, and clients' call ids repeat), and the
  // system error under a transport failure (ECONNREFUSED): never the message, which may quote the tool's answer.
  const code = systemCode(error);
  const whose = call === undefined ? {} : { session_id: call.sessionId, ...tenantField(call.tenant) };
  failureLog(logger)('a tool call failed', { tool, kind: ErrorKind[error.kind], phase: error.phase, ...status, ...(code === undefined ? {} : { cause: code }), tool_call_id: callId, attempt, ...whose });
}

/** The code of the first Node system error (`ECONNREFUSED`, `ENOTFOUND`...) in `error`'s causes, at most four deep. */
function systemCode(error: unknown): string | undefined {
  // Not `instanceof Error`: undici's errors may come from another realm (Node's own fetch).
  for (let e = error, depth = 0; typeof e === 'object' && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
  }
  return undefined;
}

/** The post hooks' notes; a hook that throws or rejects adds none. Awaits only a promise. */
export function postHookNotes(deps: PipelineDeps, input: PostHookInput): readonly string[] | Promise<readonly string[]> {
  try {
    const notes = deps.guards.postHook(input);
    return notes instanceof Promise ? notes.catch(() => NO_NOTES) : notes;
  } catch {
    return NO_NOTES;
  }
}

const NO_NOTES: readonly string[] = [];

/**
 * Step 9's post hooks, after TOOL_POST: their notes on `outcome`'s output go to its warnings. An
 * attempt its idempotency record answers gets them too, as a memoized one does: the model reads
 * the same output, and so the same notes, as the attempt that ran (a replay had none).
 */
export function withPostNotes(deps: PipelineDeps, turn: TurnContext, tool: ResolvedTool, args: unknown, attempt: number, outcome: AttemptResult): AttemptResult | Promise<AttemptResult> {
  const { result } = outcome;
  const add = (notes: readonly string[]) => {
    if (notes.length > 0) result.warnings.push(...notes);
    return outcome;
  };
  const notes = postHookNotes(deps, { tenant: turn.tenant, sessionId: turn.sessionId, tool, args, attempt, output: result.output, isError: result.isError });
  // Awaits only a promise: a call whose hooks answer at once takes no turn of the event loop here.
  return notes instanceof Promise ? notes.then(add) : add(notes);
}

/**
 * Failures that count against a breaker (DESIGN section 8): timeouts, transport and executor
 * errors (a connection refused or lost, a worker gone), crashes, and answers of 5xx or 408. An
 * answer with any other HTTP status (4xx, 429) is not counted, nor is an error the tool answered
 * itself, which says no more of its health than a 4xx: a worker's `is_error` completion, an MCP
 * tool's `isError` result or its server's JSON-RPC error, a redirect dispatch does not follow.
 * Counted, one tenant's bad calls to a shared tool would open its breaker for every tenant. Nor is
 * a call refused because dispatch's Redis (its link to other replicas) is down: that is not the
 * tool's health, and counted, a large call's refusal would refuse small calls too.
 */
export function countsForBreaker(error: DispatchError): boolean {
  if (error.httpStatus !== undefined) return serverTrouble(error.httpStatus);
  if (error.notTheTool) return false;
  return error.kind === ErrorKind.TIMEOUT || error.kind === ErrorKind.UNAVAILABLE || error.kind === ErrorKind.UNEXPECTED;
}
