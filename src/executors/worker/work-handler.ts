import type * as grpc from '@grpc/grpc-js';
import { status } from '@grpc/grpc-js';
import type { ToolSpec } from '../../../gen/dispatch/v1/tool_pb';
import type { Hello, WorkAssignment, WorkerMessage } from '../../../gen/dispatch/v1/worker_pb';
import type { Logger } from '../../log';
import { clientIdRefusal } from '../../parse/client-id';
import { RegistryError, type ToolRegistry } from '../../registry';
import { CREDENTIAL_RECHECK_MS, invalidArgument, malformedMessage, recheckCredentials, registryRpcError, RpcError, statusDetails, toServiceError, type Authenticator } from '../../server';
import { declaredReadOnly } from './effect-guard';
import { helloBytesRefusal, helloCountRefusal } from './hello-bytes';
import { changedSpecs, helloSpecs } from './hello-specs';
import { connectionWatch } from './receive-failures';
import { resetUnsent } from './stream-reset';
import { streamEndReason, type StreamEndCause } from './stream-end';
import type { EndStatus, ReceiveLimit, WorkerLink } from './worker-link';
import type { ResolvedWorkerOptions } from './worker-options';
import type { WorkerPool } from './worker-pool';

/** What the Work handler needs; the registry and authenticator are read when a stream opens. */
export interface WorkHandlerDeps {
  readonly pool: WorkerPool;
  readonly registry: () => ToolRegistry;
  /** Tools a tenant may own (limits.max_tools_per_tenant): a worker's hello counts as a registration. */
  readonly maxToolsPerTenant?: () => number;
  /** Bytes of specs a tenant's tools may hold (limits.max_schema_bytes_per_tenant): a hello past it alone is refused for good. */
  readonly maxSchemaBytesPerTenant?: () => number;
  readonly authenticate: () => Authenticator;
  readonly logger: Logger;
  readonly options: ResolvedWorkerOptions;
  /**
   * limits.worker_receive_bytes (what a worker whose hello does not say is assumed to receive) and
   * limits.max_message_bytes (the largest message sent here). @default 4 MiB each
   */
  readonly messageLimits?: () => { readonly workerReceiveBytes: number; readonly maxMessageBytes: number };
  /** Told of the tools a worker registered, to share them with other replicas. */
  readonly onRegistered?: (tenant: string, specs: readonly ToolSpec[]) => void;
  /**
   * Fires when the replica drains: a stream with no hello registered yet ends then (OK, as the
   * pool ends its workers' streams: they connect again, elsewhere), and one opened later at once.
   * Before, such a stream held the shutdown until its hello timeout or the grace ran out.
   */
  readonly draining?: AbortSignal;
}

type WorkCall = grpc.ServerDuplexStream<WorkerMessage, WorkAssignment>;

/**
 * `WorkerService.Work`: the caller (scope `worker`) says `hello` with the tools it hosts, which are
 * registered for its tenant; it then receives assignments, answers completions and heartbeats.
 * Any ending of the stream fails the assignments it held, DURING.
 */
export function createWorkHandler(deps: WorkHandlerDeps): grpc.handleBidiStreamingCall<WorkerMessage, WorkAssignment> {
  let serials = 0;
  return (call: WorkCall) => {
    let ended = false;
    let link: WorkerLink | undefined;
    let rechecks: NodeJS.Timeout | undefined;
    const detach = (why: string) => {
      if (link) deps.pool.remove(link, why);
    };
    const helloTimer = setTimeout(() => end({ code: status.DEADLINE_EXCEEDED, reason: 'HELLO_TIMEOUT', details: `no hello within ${deps.options.heartbeatTimeoutMs} ms` }), deps.options.heartbeatTimeoutMs);
    helloTimer.unref();
    /** Ends the stream: OK without a reason; else an EndStatus, or an error mapped to a status. */
    const end = (reason?: unknown) => {
      if (ended) return;
      ended = true;
      clearTimeout(helloTimer);
      clearInterval(rechecks);
      deps.draining?.removeEventListener('abort', drained);
      detach('disconnected');
      if (reason === undefined) {
        call.end();
        return;
      }
      const failed = isEndStatus(reason) ? { ...reason, metadata: statusDetails(reason.code, reason.details, reason.reason) } : toServiceError(reason, deps.logger);
      // As its connection is logged: an operator reads why a worker went (heartbeats, not reading, its token) here, not only in its calls' messages.
      if (link) deps.logger.warn('worker stream ended by dispatch', { worker: link.workerId, tenant: link.tenant, code: status[failed.code ?? status.UNKNOWN], reason: isEndStatus(reason) ? reason.reason : undefined, details: failed.details });
      call.emit('error', failed);
      if ((link?.unsent() ?? 0) > 0) resetUnsent(call, failed.code ?? status.UNKNOWN);
    };

    // Once a link exists the pool ends it as it drains (WorkerPool.drain, and add past the drain).
    const drained = () => void (link || end());
    if (deps.draining?.aborted) return drained();
    deps.draining?.addEventListener('abort', drained, { once: true });

    let tenant: string;
    try {
      tenant = deps.authenticate()(call, 'worker').tenant;
    } catch (error) {
      end(error);
      return;
    }

    // The credentials are checked again now and then: a token revoked in the tokens file ends the
    // streams it opened, and so does one the file gave to another tenant (the worker would go on
    // serving the old tenant's calls). On every message once the interval passed, and on a timer:
    // a quiet worker (heartbeats up to 5 s apart) is sent no call past the interval either.
    let checkedAt = Date.now();
    const recheck = (now: number, always = false) => {
      if (!always && now - checkedAt < CREDENTIAL_RECHECK_MS) return;
      checkedAt = now;
      recheckCredentials(deps.authenticate(), call, 'worker', tenant);
    };
    rechecks = setInterval(() => {
      try {
        recheck(Date.now(), true);
      } catch (error) {
        end(error);
      }
    }, CREDENTIAL_RECHECK_MS);
    rechecks.unref();

    // Set once a hello arrived: its tools may take seconds to compile (in the compiler's thread).
    let greeted = false;
    const hello = (message: Hello) => {
      if (link || greeted) throw new RpcError(status.FAILED_PRECONDITION, 'hello was already sent on this stream; open another stream to host other tools', 'OUT_OF_ORDER');
      // It is logged with every connect and disconnect.
      const refusal = clientIdRefusal('worker_id', message.workerId, 'a worker id');
      if (refusal !== undefined) throw invalidArgument('hello.worker_id', refusal);
      const registry = deps.registry();
      const specs = helloSpecs(message, tenant, registry, deps.options.maxToolsPerHello);
      const overAlone = helloCountRefusal(specs, deps.maxToolsPerTenant?.() ?? Infinity) ?? (tenant === '' ? undefined : helloBytesRefusal(specs, deps.maxSchemaBytesPerTenant?.() ?? Infinity));
      if (overAlone !== undefined) throw invalidArgument('hello.tools', overAlone);
      greeted = true;
      clearTimeout(helloTimer);
      const changed = changedSpecs(registry, tenant, specs);
      registry
        .registerAsync(specs, { tenant, replace: true, maxTools: deps.maxToolsPerTenant?.() })
        .then(() => {
          if (changed.length > 0) deps.logger.warn("a worker's hello changed the input_schema or effect of tools an earlier hello registered: every call of them is checked against the new spec now, whichever worker runs it, and it stays after this worker leaves", { worker: message.workerId, tenant, tools: changed.slice(0, 20) });
          connect(message, specs);
        })
        .catch((error: unknown) => end(error instanceof RegistryError ? registryRpcError(error, 'hello.') : error));
    };

    /** Takes the worker's calls once its tools are registered; a stream ended meanwhile only shares them (they are registered). */
    const connect = (message: Hello, specs: ToolSpec[]) => {
      if (ended) {
        deps.onRegistered?.(tenant, specs);
        return;
      }
      let unsent = 0;
      let takenAt = 0;
      link = {
        serial: ++serials,
        workerId: message.workerId || `worker-${serials}`,
        tenant,
        tools: new Set(specs.map((s) => s.name)),
        readOnlyTools: declaredReadOnly(specs),
        pending: new Map(),
        overdue: new Map(),
        lastSeen: Date.now(),
        unsent: () => unsent,
        takenAt: () => takenAt,
        maxUnsentBytes: deps.options.maxUnsentBytes,
        receiveLimit: receiveLimit(message.maxReceiveMessageBytes, deps.messageLimits?.()),
        connectionLost: connectionWatch(call),
        send: (assignment, taken) => {
          if (ended) return;
          // The callback runs once the transport took the message; a worker that reads nothing
          // leaves it (and every later one) in the stream's buffers (see WorkerPool's pick).
          const bytes = assignmentBytes(assignment);
          if (unsent === 0) takenAt = Date.now();
          unsent += bytes;
          call.write(assignment, () => {
            unsent -= bytes;
            takenAt = Date.now();
            taken?.();
          });
        },
        end,
      };
      deps.pool.add(link);
      deps.onRegistered?.(tenant, specs);
      deps.logger.info('worker connected', { worker: link.workerId, tenant, tools: [...link.tools] });
    };

    call.on('data', (message: WorkerMessage) => {
      if (ended) return;
      const now = Date.now();
      if (link) link.lastSeen = now;
      try {
        recheck(now);
        switch (message.msg.case) {
          case 'hello':
            return hello(message.msg.value);
          case 'completion':
            if (!link) throw new RpcError(status.FAILED_PRECONDITION, 'a completion arrived before hello', 'OUT_OF_ORDER');
            return deps.pool.complete(link, message.msg.value);
          case 'drain':
            // The worker stops: no new call, its held ones answered before it half-closes (worker.proto, Drain).
            if (!link) throw new RpcError(status.FAILED_PRECONDITION, 'a drain arrived before hello', 'OUT_OF_ORDER');
            deps.logger.info('worker draining', { worker: link.workerId, tenant: link.tenant, holding: link.pending.size });
            return deps.pool.unhost(link);
          default:
            return;
        }
      } catch (error) {
        end(error);
      }
    });
    let halfClosed: NodeJS.Timeout | undefined;
    const gone = (error?: unknown) => {
      const cause = { oversized: oversizedMessage(call), malformed: malformedMessage(error) };
      if (link && !ended) logEnd(deps.logger, link, cause);
      ended = true;
      clearTimeout(helloTimer);
      clearInterval(rechecks);
      deps.draining?.removeEventListener('abort', drained);
      clearTimeout(halfClosed);
      if (link) deps.pool.remove(link, streamEndReason(cause));
    };
    /** The worker sends nothing more: its calls are lost, as on a disconnect; only a reset may be a refused large one (receiveFailure). */
    const endedByWorker = () => {
      if (link && !ended) deps.logger.info('worker disconnected', { worker: link.workerId, tenant: link.tenant });
      if (link && !ended && resetByPeer(call)) deps.pool.remove(link, streamEndReason());
      end();
    };
    // The worker half-closed, or reset the stream: a library refusing an assignment (grpc-js) ends
    // its side, then resets it, and the reset shows up to tens of ms after this (and 'cancelled'
    // later still). A half-close alone is the worker stopping (examples/python/worker.py on
    // SIGTERM), never suspected: told "disconnected" by end() once no reset followed. Meanwhile it
    // takes no new call (a worker stopping may still run what it reads, but can answer none).
    call.on('end', () => {
      if (!link || ended || resetByPeer(call)) return endedByWorker();
      deps.pool.unhost(link);
      halfClosed ??= setTimeout(endedByWorker, RESET_AFTER_HALF_CLOSE_MS);
    });
    call.on('cancelled', gone);
    call.on('error', gone);
  };
}

/**
 * The largest assignment a worker receives: what its hello says (`said`; 0 when it says nothing),
 * else what limits.worker_receive_bytes assumes (4 MiB, what every gRPC library receives by
 * default; not max_response_bytes, which bounds answers to clients); never past
 * limits.max_message_bytes, the largest message grpc-js sends here.
 */
function receiveLimit(said: number, limits = { workerReceiveBytes: 4 * 1024 * 1024, maxMessageBytes: 4 * 1024 * 1024 }): ReceiveLimit {
  const wanted: ReceiveLimit = said > 0 ? { bytes: said, from: 'hello' } : { bytes: limits.workerReceiveBytes, from: 'assumed' };
  return wanted.bytes > limits.maxMessageBytes ? { bytes: limits.maxMessageBytes, from: 'max_message_bytes' } : wanted;
}

/** About the size of an assignment on the wire (its strings, plus room for the rest). */
function assignmentBytes(a: WorkAssignment): number {
  const call = a.call;
  return 64 + a.assignmentId.length + a.sessionId.length + a.idempotencyKey.length + a.traceparent.length + (call ? call.id.length + call.name.length + call.arguments.length : 0);
}

/**
 * The message from the worker that grpc-js refused over the server's receive limit
 * (max_message_bytes) when it ended the stream itself, else undefined. grpc-js tells the handler
 * only 'cancelled', and its status goes out later, so the size is read from the call's frame
 * decoder (grpc-js 1.14's BaseServerInterceptingCall): should that change, the calls are told
 * 'disconnected' as before (test/workers/oversized-completion.test.ts would say so).
 */
function oversizedMessage(call: WorkCall): { bytes: number; max: number } | undefined {
  const decoder = (call as unknown as { call?: { decoder?: { readMessageSize?: unknown; maxReadMessageLength?: unknown } } }).call?.decoder;
  const bytes = decoder?.readMessageSize;
  const max = decoder?.maxReadMessageLength;
  if (typeof bytes !== 'number' || typeof max !== 'number' || max < 0 || bytes <= max) return undefined;
  return { bytes, max };
}

/**
 * Logs a worker's stream ending without dispatch ending it: a warning when it sent a message
 * dispatch could not take (over max_message_bytes, or undecodable: the worker answered, wrongly,
 * and an operator needs to know which worker and why), else an info line, as before.
 */
function logEnd(logger: Logger, link: WorkerLink, cause: StreamEndCause): void {
  const fields = { worker: link.workerId, tenant: link.tenant };
  if (cause.oversized) logger.warn('worker stream ended: its message was larger than max_message_bytes', { ...fields, bytes: cause.oversized.bytes, max_message_bytes: cause.oversized.max });
  else if (cause.malformed !== undefined) logger.warn('worker stream ended: its message could not be decoded', { ...fields, code: 'INVALID_ARGUMENT', reason: 'MALFORMED_REQUEST', details: cause.malformed });
  else logger.info('worker disconnected', fields);
}

/** How long a half-closed worker stream is watched for a reset before its calls are told "disconnected". */
const RESET_AFTER_HALF_CLOSE_MS = 250;

/**
 * Whether the worker reset the stream (RST_STREAM) rather than (only) half-closed it: Node sets the
 * HTTP/2 stream's rstCode as the reset arrives. Read from grpc-js 1.14's
 * BaseServerInterceptingCall, as oversizedMessage does: should that change, a reset is taken for a
 * half-close, and the worker is not suspected (test/workers/overstated-receive-limit.test.ts would say so).
 */
function resetByPeer(call: WorkCall): boolean {
  const code = (call as unknown as { call?: { stream?: { rstCode?: unknown } } }).call?.stream?.rstCode;
  return typeof code === 'number' && code !== 0;
}

function isEndStatus(value: unknown): value is EndStatus {
  return typeof value === 'object' && value !== null && typeof (value as EndStatus).code === 'number' && typeof (value as EndStatus).details === 'string' && !(value instanceof Error);
}
