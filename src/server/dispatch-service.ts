import { create } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import {
  DispatchMode,
  EndSessionResponseSchema,
  GetSessionMemoryResponseSchema,
  type DispatchRequest,
  type DispatchResponse,
  type EndSessionRequest,
  type EndSessionResponse,
  type GetSessionMemoryRequest,
  type GetSessionMemoryResponse,
  type ToolResult,
} from '../../gen/dispatch/v1/dispatch_pb';
import type { ServerSurfaceCall } from '@grpc/grpc-js/build/src/server-call';
import { HardError } from '../errors';
import { callIdProblem } from '../parse';
import { clientIdRefusal, idLength, MAX_CLIENT_ID_CHARS } from '../parse/client-id';
import { throttledWarn } from '../log';
import { createAbortScope, DEADLINES, dispatchSequential, onAbort, tenantField, turnError, type PipelineDeps, type TurnContext } from '../pipeline';
import { checkOfferedNames } from './offered-tools';
import { invalidArgument, RpcError, unary } from './grpc-adapter';
import { MAX_OFFERED_TOOLS, sentCounts } from './dispatch-request-codec';
import { fitResponse } from './fit-response';
import { readResultHandler } from './read-result';
import { peakCalls } from './peak-calls';
import { createTurnAdmission, type TurnAdmission } from './turn-admission';
import { leastResultBytes, RESPONSE_SLACK_BYTES } from '../options';
import { LEAST_NAME_CHARS, leastName } from './least-result';
import type { Authenticator } from './principal';

/** Runs a turn in parallel mode; absent until waves are wired in. */
export type ParallelDispatcher = (deps: PipelineDeps, turn: TurnContext, request: DispatchRequest) => Promise<ToolResult[]>;

/** What the Dispatch service handlers need beyond the pipeline. */
export interface DispatchServiceOptions {
  readonly deps: PipelineDeps;
  readonly authenticate: Authenticator;
  /** Fires when the server shuts down past its grace period. */
  readonly shutdown: AbortSignal;
  /** Fires when the server begins to drain: turns start no more attempts (TurnContext.draining). */
  readonly draining?: AbortSignal;
  readonly parallel?: ParallelDispatcher;
  /** The bounds on turns running at once. @default from deps.limits */
  readonly admission?: TurnAdmission;
  /** No authentication is configured: ReadResult's per-tenant bound is its whole bound. @default false */
  readonly singleTenant?: boolean;
}

/**
 * The caller's `tracestate` (W3C Trace Context: list members joined by commas, several headers
 * one list), when it is at most 512 characters of printable ASCII as the specification bounds it;
 * else none (a longer one may be cut, a malformed one dropped: dropped here).
 */
function traceStateOf(metadata: grpc.Metadata): string | undefined {
  const values = metadata.get('tracestate');
  if (values.length === 0) return undefined;
  const joined = values.map(String).join(',');
  return joined.length <= 512 && /^[\x20-\x7e]+$/.test(joined) ? joined : undefined;
}

/**
 * A session id a turn may name: required, and the rule of every client-chosen id (client-id.ts):
 * at most 256 code points, no control or invisible or bidirectional format character. It is
 * logged, keyed (local keys join tenant, session and tool with NUL, so a NUL could name another
 * tenant's session: "acme" + "prod\0s" is "acme\0prod" + "s"), sent in events and to tools.
 */
function checkSessionId(sessionId: string): void {
  if (sessionId === '') throw invalidArgument('session_id', 'session_id is required');
  const refusal = clientIdRefusal('session_id', sessionId, 'a session id');
  if (refusal !== undefined) throw invalidArgument('session_id', refusal);
}

function checkRequest(request: DispatchRequest, maxCalls: number): void {
  checkSessionId(request.sessionId);
  const sent = sentCounts(request);
  if (sent.calls > maxCalls) {
    throw invalidArgument('calls', `${sent.calls} calls in one turn, over the limit of ${maxCalls}`);
  }
  // A call id reaches events, spans, logs, workers and terminals; the model reads it back.
  for (let i = 0; i < request.calls.length; i++) {
    const problem = callIdProblem(request.calls[i]!.id);
    if (problem !== undefined) throw invalidArgument(`calls[${i}].id`, `calls[${i}].id ${problem}; nothing was run`);
  }
  if (sent.offeredTools > MAX_OFFERED_TOOLS) {
    throw invalidArgument('offered_tools', `${sent.offeredTools} offered tools in one turn, over the limit of ${MAX_OFFERED_TOOLS}`);
  }
  checkOfferedNames(request.offeredTools);
}

/** The most bytes a result cut to its least may take: ids at their bound of code points, 4 bytes each, and its name cut to its least. */
const MOST_LEAST_RESULT_BYTES = leastResultBytes({ idBytes: 4 * MAX_CLIENT_ID_CHARS, nameBytes: 4 * LEAST_NAME_CHARS + 8, sessionIdBytes: 4 * MAX_CLIENT_ID_CHARS });

/**
 * Refuses, before any call runs, a turn whose results could not fit in `maxBytes`
 * (max_response_bytes) even cut to their least (options/result-floor.ts): its calls would run,
 * side effects included, and their results would be lost to RESOURCE_EXHAUSTED.
 */
function checkResponseRoom(request: DispatchRequest, maxBytes: number): void {
  // At the defaults (4 MiB, 128 calls) any turn fits: no id is measured.
  if (RESPONSE_SLACK_BYTES + request.calls.length * MOST_LEAST_RESULT_BYTES <= maxBytes) return;
  const sessionIdBytes = Buffer.byteLength(request.sessionId);
  let need = RESPONSE_SLACK_BYTES;
  for (const call of request.calls) need += leastResultBytes({ idBytes: Buffer.byteLength(call.id), nameBytes: Buffer.byteLength(leastName(call.name)), sessionIdBytes });
  if (need <= maxBytes) return;
  const calls = request.calls.length;
  const fits = Math.floor(((maxBytes - RESPONSE_SLACK_BYTES) * calls) / (need - RESPONSE_SLACK_BYTES));
  throw invalidArgument(
    'calls',
    `the results of ${calls} calls cannot fit in one response of max_response_bytes (${maxBytes}) even cut to their least: with these call ids, names and session id they take ${need} bytes; nothing was run. ` +
      `Send ${fits > 0 ? `at most ~${fits} calls per turn` : 'fewer calls per turn'}, shorter call ids or session id, or raise limits.max_response_bytes`,
  );
}

function deadlineOf(call: ServerSurfaceCall): number {
  const deadline = call.getDeadline();
  const ms = deadline instanceof Date ? deadline.getTime() : Number(deadline);
  return Number.isFinite(ms) && ms > 0 ? ms : Infinity;
}

/**
 * The characters a turn holds while it runs: its calls' arguments, ids and names, and its offered
 * tools (what its memory grows with; any of them can carry most of a 4 MiB message).
 */
function argumentChars(request: DispatchRequest): number {
  let chars = request.sessionId.length;
  for (const call of request.calls) chars += call.arguments.length + call.id.length + call.name.length;
  for (const name of request.offeredTools) chars += name.length;
  return chars;
}

/** The unary handlers of DispatchService that this file owns: Dispatch, ReadResult, EndSession. */
export function dispatchHandlers(options: DispatchServiceOptions) {
  const { deps, authenticate } = options;
  const logger = deps.logger;

  const admission = options.admission ?? createTurnAdmission(deps.limits);
  const warnOverloaded = throttledWarn(logger);
  // A turn a loop or a failing tool stopped left no trace but in events nobody may watch (an SRE's
  // probe: which session looped?): one line each, at most one per 10 s per reason and tool.
  const stoppedLog = throttledWarn(logger, { keyOf: (_, fields) => `${String(fields?.reason)}\0${String(fields?.tool)}` });
  const logStopped = (hard: HardError, turn: TurnContext) =>
    stoppedLog('a turn was stopped', { reason: hard.reason, tool: hard.facts.tool, tool_call_id: hard.facts.tool_call_id, session_id: turn.sessionId, ...tenantField(turn.tenant) });

  async function dispatch(request: DispatchRequest, call: grpc.ServerUnaryCall<DispatchRequest, DispatchResponse>): Promise<DispatchResponse> {
    const principal = authenticate(call, 'dispatch');
    checkRequest(request, deps.limits.maxCallsPerTurn);
    checkResponseRoom(request, deps.limits.maxResponseBytes);
    let release: () => void;
    try {
      release = admission.admit(principal.tenant, argumentChars(request), peakCalls(request, options.parallel));
    } catch (error) {
      warnOverloaded('turns refused: too many running at once', { tenant: principal.tenant, inFlight: admission.inFlight, error: (error as Error).message });
      throw error;
    }
    let unwinding: Promise<unknown> | undefined;
    try {
      return await runTurn(request, call, principal.tenant);
    } catch (error) {
      unwinding = error instanceof HardError ? error.unwound : undefined;
      throw error;
    } finally {
      // A parallel turn's hard error answers at once, while the calls it aborted may still run (a
      // hook or store step that does not heed the abort): the turn keeps its place until they
      // have unwound, a wait with its own bound, or each retried failure would add work unbounded.
      if (unwinding) void unwinding.then(release, release);
      else release();
    }
  }

  async function runTurn(request: DispatchRequest, call: grpc.ServerUnaryCall<DispatchRequest, DispatchResponse>, tenant: string): Promise<DispatchResponse> {
    const received = Date.now();
    const scope = createAbortScope();
    const abort = () => scope.abort();
    // `on`, not `once` (removed in finally either way): once wraps the listener per call.
    call.on('cancelled', abort);
    const unsubscribe = onAbort(options.shutdown, abort);
    const deadline = deadlineOf(call);
    const timer = deadline === Infinity ? undefined : DEADLINES.add(Math.max(0, deadline - Date.now()), abort);
    const traceparent = call.metadata.get('traceparent')[0]?.toString();
    const tracestate = traceStateOf(call.metadata);
    const observer = deps.observer.turn({ tenant, sessionId: request.sessionId, turn: request.turn, traceparent, callCount: request.calls.length });
    const parallel = request.mode === DispatchMode.PARALLEL && request.calls.length >= 2 && options.parallel;
    const turn: TurnContext = {
      tenant,
      sessionId: request.sessionId,
      turn: request.turn,
      signal: scope.signal,
      deadline,
      received,
      shutdown: options.shutdown,
      draining: options.draining,
      offeredTools: request.offeredTools.length > 0 ? new Set(request.offeredTools) : undefined,
      interactive: request.interactive,
      observer,
      traceparent,
      tracestate,
      scope: { tenant, sessionId: request.sessionId },
      // A parallel turn's waves copy the turn, so share the set made now; a sequential turn makes
      // it at its first wait told (toldInTurn): few turns are told one.
      toldWaits: parallel ? new Set() : undefined,
    };
    try {
      const results = parallel ? await parallel(deps, turn, request) : await dispatchSequential(deps, turn, request);
      await fitResponse(results, deps.limits.maxResponseBytes, deps, turn.scope!);
      observer.end();
      // The message's one field, as create() would make it without walking the schema per call.
      const response: DispatchResponse = { $typeName: 'dispatch.v1.DispatchResponse', results };
      return response;
    } catch (error) {
      // The dispatchers decided it already for the calls they ended; the turn gets the same.
      const hard = turnError(error, deadline, call.cancelled ? undefined : options.shutdown, received);
      const reason = hard instanceof HardError ? hard.reason : 'INTERNAL';
      // The turn ends after the events of the calls the error aborted (a parallel turn's siblings).
      const unwound = hard instanceof HardError ? hard.unwound : undefined;
      if (hard instanceof HardError && (reason === 'LOOP_DETECTED' || reason === 'RECOVERY_EXHAUSTED')) logStopped(hard, turn);
      if (unwound) void unwound.then(() => observer.end(reason));
      else observer.end(reason);
      throw hard;
    } finally {
      DEADLINES.cancel(timer);
      call.removeListener('cancelled', abort);
      unsubscribe();
    }
  }

  async function endSession(request: EndSessionRequest, call: grpc.ServerUnaryCall<EndSessionRequest, EndSessionResponse>): Promise<EndSessionResponse> {
    const principal = authenticate(call, 'dispatch');
    // An unknown session's end is OK (DESIGN section 2), an empty or long id's too (no turn may
    // name one: nothing to clear, no store step; a 4 MiB id made a 4 MiB key for every store to
    // clear, per call); an id holding a control or format character is refused as Dispatch refuses it.
    if (request.sessionId === '' || idLength(request.sessionId, MAX_CLIENT_ID_CHARS) > MAX_CLIENT_ID_CHARS) return create(EndSessionResponseSchema, {});
    checkSessionId(request.sessionId);
    const scope = { tenant: principal.tenant, sessionId: request.sessionId };
    await deps.store.endSession(scope).catch(() => {
      throw new RpcError(grpc.status.UNAVAILABLE, 'the session store is unreachable; try again shortly', 'STORE_UNAVAILABLE');
    });
    return create(EndSessionResponseSchema, {});
  }

  /**
   * The session's trajectory memory (written after each call that succeeded; before, nothing read
   * it), newest entries kept when all do not fit max_response_bytes (each is at most ~1,600
   * characters, 4 bytes of UTF-8 at most each, and its field's few bytes of framing).
   */
  async function getSessionMemory(request: GetSessionMemoryRequest, call: grpc.ServerUnaryCall<GetSessionMemoryRequest, GetSessionMemoryResponse>): Promise<GetSessionMemoryResponse> {
    const principal = authenticate(call, 'dispatch');
    checkSessionId(request.sessionId);
    const entries = await deps.store.memory({ tenant: principal.tenant, sessionId: request.sessionId }).catch(() => {
      throw new RpcError(grpc.status.UNAVAILABLE, 'the session store is unreachable; try again shortly', 'STORE_UNAVAILABLE');
    });
    let room = deps.limits.maxResponseBytes - RESPONSE_SLACK_BYTES;
    let first = entries.length;
    while (first > 0 && (room -= Buffer.byteLength(entries[first - 1]!) + 6) >= 0) first--;
    return create(GetSessionMemoryResponseSchema, { entries: entries.slice(first), omitted: first });
  }

  return {
    dispatch: unary(logger, dispatch),
    readResult: unary(logger, readResultHandler(options)),
    endSession: unary(logger, endSession),
    getSessionMemory: unary(logger, getSessionMemory),
  };
}
