import * as grpc from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';
import type { Completion, WorkAssignment } from '../../../gen/dispatch/v1/worker_pb';
import type { Logger } from '../../log';
import type { AbortHook } from '../../pipeline/signals';
import { workAssignmentBytes, workAssignmentBytesAtMost } from '../../server/work-assignment-codec';
import { assignmentTooLargeError, noWorkerError, unreadReason, workerGoneError, type EndReason } from './worker-errors';
import type { PendingAssignment, ReceiveLimit, WorkerLink } from './worker-link';
import { assignment, type AssignmentRequest } from './assignment-request';
import { createReceiveMemory, droppedAfterAssignmentError, keptTo, largeSend, receiveFailure } from './receive-failures';
import { noRunnableWorker, runsAsRegistered } from './effect-guard';
import type { DispatchError } from '../../errors';
import type { ExecutorContext } from '../executor';
import { createLateAnswers, settleWith } from './late-answers';
import { chargeOverdue, outstanding } from './overdue-charges';
import { createPoisonCalls } from './poison-calls';

export type { AssignmentRequest };

/** Why no worker connected here can take a call: its assignment (`bytes`) is past `limit`, the largest, of `workerId`. */
export interface TooLargeAssignment {
  readonly workerId: string;
  readonly bytes: number;
  readonly limit: ReceiveLimit;
}

/** Told when a (tenant, tool) gains its first local worker or loses its last. */
export type HostedListener = (tenant: string, tool: string, hosted: boolean) => void;

/** The workers connected to this replica, and the assignments they hold. */
export interface WorkerPool {
  add(link: WorkerLink): void;
  /**
   * Removes a worker; its unanswered assignments fail DURING with `why` (see workerGoneError), but
   * for the large one its worker most likely could not receive, when it ended the stream (see
   * receiveFailure) the second time for its id (ReceiveMemory): that one fails for good, and a
   * worker of its id that connects again is kept to 4 MiB for a while.
   */
  remove(link: WorkerLink, why: string | EndReason): void;
  /** No new call goes to the link (the worker is stopping); the calls it holds stay, until remove() or their answers. */
  unhost(link: WorkerLink): void;
  complete(link: WorkerLink, completion: Completion): void;
  hosts(tenant: string, tool: string): boolean;
  hosted(): { tenant: string; tool: string }[];
  /**
   * Runs a call on the least busy worker hosting it (a read-only call: whose hello said read-only, see runsAsRegistered) that
   * can receive its assignment; rejects UNAVAILABLE (before) when none hosts it (or none such), and with the reason on `abort`.
   * When none can receive it (see WorkerLink.receiveLimit; `why` says so) or none hosting it may run it (see noRunnableWorker),
   * returns `elsewhere(refusal, why)` (another replica's worker may), else rejects with the refusal (before).
   */
  assign(request: AssignmentRequest, abort: AbortHook & Pick<ExecutorContext, 'lateAnswerPending'>, elsewhere?: (refusal: DispatchError, why?: TooLargeAssignment) => Promise<string>): Promise<string>;
  onHostedChange(listener: HostedListener): void;
  /**
   * Server shutdown: the pool hosts nothing from now on (new calls are refused UNAVAILABLE before
   * execution, and listeners hear every tool withdrawn), and ends every worker stream once it
   * holds no assignment (one whose hello is registered later, at once: its tools were announced withdrawn).
   */
  drain(): void;
  /** Ends every worker stream now. */
  close(): void;
}

/** Options of a pool. */
export interface WorkerPoolOptions {
  readonly heartbeatTimeoutMs: number;
  readonly sweepIntervalMs: number;
  readonly logger: Logger;
}

/**
 * How long the transport must have taken nothing from a worker's stream holding an eighth of
 * worker.maxUnsentBytes before its peers are picked first, and holding all of it before the worker
 * is ended. Bytes written in one burst (a turn's calls) show as unsent until the transport runs:
 * a worker reading them, however slowly, is neither.
 */
const SLOW_MS = 250;
const STUCK_MS = 2_000;

/**
 * Creates a pool that shares each tool's calls among its workers by least outstanding (assignments
 * unanswered, abandoned ones included for a while), round-robin on ties; a worker that leaves its
 * assignments unread is picked last, and ended past worker.maxUnsentBytes.
 */
export function createWorkerPool(options: WorkerPoolOptions): WorkerPool {
  // Links by tenant, then tool: two lookups of strings whose hashes are kept (a key built of both
  // per call would be hashed anew each time).
  const byTenant = new Map<string, Map<string, WorkerLink[]>>();
  const linksOf = (tenant: string, tool: string): WorkerLink[] | undefined => byTenant.get(tenant)?.get(tool);
  const links = new Set<WorkerLink>();
  const listeners: HostedListener[] = [];
  let rotation = 0;
  let draining = false;
  const late = createLateAnswers();
  const notify = (tenant: string, tool: string, hosted: boolean) => {
    for (const listener of listeners) {
      try {
        listener(tenant, tool, hosted);
      } catch (error) {
        options.logger.warn('worker hosted listener failed', { error: (error as Error).message });
      }
    }
  };
  const endIfDrained = (link: WorkerLink) => {
    if (draining && link.pending.size === 0) link.end();
  };

  /** The link to send `message` to, else undefined when none hosts the tool (that may run it, `readOnly`), else the refusal when none can receive it. */
  function pick(tenant: string, tool: string, message: WorkAssignment, readOnly: boolean): WorkerLink | undefined | { tooLarge: number; link: WorkerLink; limit: ReceiveLimit } {
    const candidates = runsAsRegistered(linksOf(tenant, tool), tool, readOnly);
    if (!candidates || candidates.length === 0) return undefined;
    let tooLarge: { tooLarge: number; link: WorkerLink; limit: ReceiveLimit } | undefined;
    // Measured once, and only when some worker's limit is below what its lengths allow.
    const atMost = workAssignmentBytesAtMost(message);
    let bytes: number | undefined;
    const now = Date.now();
    const start = rotation++ % candidates.length;
    let best: WorkerLink | undefined;
    let bestLoad = 0;
    let bestSlow = false;
    let stuck: WorkerLink[] | undefined;
    for (let i = 0; i < candidates.length; i++) {
      const link = candidates[(start + i) % candidates.length]!;
      const unsent = link.unsent();
      const stalled = unsent > 0 ? now - link.takenAt() : 0;
      if (unsent >= link.maxUnsentBytes && stalled >= STUCK_MS) {
        (stuck ??= []).push(link);
        continue;
      }
      const limit = keptTo(link, now);
      if (atMost > limit.bytes && (bytes ??= workAssignmentBytes(message)) > limit.bytes) {
        if (!tooLarge || limit.bytes > tooLarge.limit.bytes) tooLarge = { tooLarge: bytes, link, limit };
        continue;
      }
      // A link whose stream holds assignments it does not read is picked only when every other is too.
      const slow = unsent > link.maxUnsentBytes / 8 && stalled >= SLOW_MS;
      const load = outstanding(link, now);
      if (!best || (slow !== bestSlow ? !slow : load < bestLoad)) {
        best = link;
        bestLoad = load;
        bestSlow = slow;
      }
    }
    for (const link of stuck ?? []) {
      const reason = unreadReason(link.unsent());
      pool.remove(link, reason);
      link.end({ code: grpc.status.RESOURCE_EXHAUSTED, reason: 'WORKER_NOT_READING', details: `the worker does not read its assignments (${link.unsent()} bytes of them are waiting to be sent to it, worker.maxUnsentBytes ${link.maxUnsentBytes}); its calls were failed` });
    }
    return best ?? tooLarge;
  }

  const sweep = setInterval(() => {
    const now = Date.now();
    for (const link of [...links]) {
      if (now - link.lastSeen <= options.heartbeatTimeoutMs) continue;
      const why = `sent no heartbeat for ${options.heartbeatTimeoutMs} ms`;
      pool.remove(link, { why, hung: true });
      link.end({ code: grpc.status.UNAVAILABLE, reason: 'HEARTBEAT_MISSED', details: `worker ${why}; its assignments were failed` });
    }
  }, options.sweepIntervalMs);
  sweep.unref();

  const memory = createReceiveMemory();
  const poison = createPoisonCalls(options.logger);

  const pool: WorkerPool = {
    add(link) {
      if (draining) return link.end();
      link.lowered = memory.lowered(link.tenant, link.workerId, link.receiveLimit);
      links.add(link);
      let tools = byTenant.get(link.tenant);
      if (!tools) byTenant.set(link.tenant, (tools = new Map()));
      for (const tool of link.tools) {
        const list = tools.get(tool) ?? [];
        list.push(link);
        tools.set(tool, list);
        if (list.length === 1) notify(link.tenant, tool, true);
      }
    },
    remove(link, why) {
      if (!links.delete(link)) return;
      const reason = typeof why === 'string' ? { why } : why;
      pool.unhost(link);
      // Only links that connect later are kept lower: live ones of the same id (pods of one
      // deployment share it) go on taking what they can.
      const found = reason.byWorker ? receiveFailure(link) : undefined;
      const failure = found && memory.dropped(link, found) ? found : undefined;
      if (failure) options.logger.warn('a worker dropped its stream just after a large assignment, the second time for its id within 10 minutes: most likely larger than it can receive; for 10 minutes, one of its id connecting with the same hello is sent none past 4 MiB', { worker: link.workerId, tenant: link.tenant, bytes: failure.bytes, stated: failure.limit.bytes });
      const pending = [...link.pending];
      link.pending.clear();
      link.overdue.clear();
      late.drop(link);
      const told = pending.length > 1 && reason.whenShared ? { ...reason, ...reason.whenShared } : reason;
      const gone = (p: PendingAssignment) => poison.stopped(link.tenant, link.workerId, p, told, () => workerGoneError(p.tool, link.workerId, told));
      for (const [id, p] of pending) p.reject(id === failure?.assignmentId ? droppedAfterAssignmentError(p.tool, link.workerId, failure) : gone(p));
    },
    unhost(link) {
      const tools = byTenant.get(link.tenant);
      for (const tool of tools ? link.tools : []) {
        const list = tools!.get(tool);
        if (!list?.includes(link)) continue;
        if (list.length > 1) tools!.set(tool, list.filter((l) => l !== link));
        else {
          tools!.delete(tool);
          notify(link.tenant, tool, false);
        }
      }
      if (tools?.size === 0) byTenant.delete(link.tenant);
    },
    complete(link, completion) {
      const pending = link.pending.get(completion.assignmentId);
      if (!pending) {
        late.answer(link, completion);
        return void link.overdue.delete(completion.assignmentId);
      }
      link.pending.delete(completion.assignmentId);
      // It answers: the calls it left unanswered were cancels it need not answer, not silence.
      link.overdue.clear();
      settleWith(pending, completion);
      endIfDrained(link);
    },
    // Draining, this replica hosts nothing: new calls (its own, relayed ones) go to other replicas.
    hosts: (tenant, tool) => !draining && (linksOf(tenant, tool)?.length ?? 0) > 0,
    hosted: () => (draining ? [] : [...byTenant].flatMap(([tenant, tools]) => [...tools.keys()].map((tool) => ({ tenant, tool })))),
    assign(request, abort, elsewhere) {
      const assignmentId = randomUUID();
      const message = assignment({
        assignmentId,
        call: { $typeName: 'dispatch.v1.ToolCall', id: request.toolCallId, name: request.tool, arguments: request.argumentsJson },
        sessionId: request.sessionId,
        attempt: request.attempt,
        idempotencyKey: request.idempotencyKey,
        deadlineMs: BigInt(Number.isFinite(request.deadline) ? Math.round(request.deadline) : 0),
        traceparent: request.traceparent ?? '',
      });
      const keptOut = poison.keptOut(request.tenant, { tool: request.tool, args: request.argumentsJson });
      if (keptOut) return Promise.reject(keptOut);
      const readOnly = request.readOnly === true;
      const link = draining ? undefined : pick(request.tenant, request.tool, message, readOnly);
      if (!link) return draining ? Promise.reject(noWorkerError(request.tool)) : noRunnableWorker(linksOf(request.tenant, request.tool), request.tool, readOnly, elsewhere);
      if ('tooLarge' in link) {
        const { tooLarge, link: largest, limit } = link;
        const refusal = assignmentTooLargeError(request.tool, largest.workerId, tooLarge, Buffer.byteLength(request.argumentsJson), limit);
        return elsewhere ? elsewhere(refusal, { workerId: largest.workerId, bytes: tooLarge, limit }) : Promise.reject(refusal);
      }
      return new Promise<string>((resolve, reject) => {
        let sent = false;
        let sentAt = 0;
        const onAbort = (reason: unknown) => {
          if (!link.pending.delete(assignmentId)) return;
          if (sent) {
            link.send(assignment({ assignmentId, cancel: true }));
            chargeOverdue(link, assignmentId, Date.now() - sentAt);
          }
          // A side-effecting call's answer after its timeout is still heard (late-answers.ts).
          if (sent && !readOnly && abort.lateAnswerPending) {
            abort.lateAnswerPending();
            late.hold(assignmentId, { link, tool: request.tool, reason, resolve, reject });
          } else reject(reason);
          endIfDrained(link);
        };
        let unsubscribe: () => void = () => undefined;
        const large = largeSend(message);
        link.pending.set(assignmentId, {
          tool: request.tool,
          args: request.argumentsJson,
          large,
          resolve: (output) => (unsubscribe(), resolve(output)),
          reject: (error) => (unsubscribe(), reject(error)),
        });
        unsubscribe = abort.onAbort(onAbort);
        // Aborted already: the listener ran at once and nothing goes to the worker.
        if (!link.pending.has(assignmentId)) return;
        sent = true;
        sentAt = Date.now();
        link.send(message, large && (() => (large.takenAt = Date.now())));
      });
    },
    onHostedChange: (listener) => void listeners.push(listener),
    drain() {
      if (draining) return;
      // Other replicas stop routing calls here (the relay withdraws the routes); the calls the
      // workers hold finish, and each link ends once it holds none.
      const hosted = pool.hosted();
      draining = true;
      for (const { tenant, tool } of hosted) notify(tenant, tool, false);
      for (const link of links) endIfDrained(link);
    },
    close() {
      clearInterval(sweep);
      late.drop();
      for (const link of [...links]) {
        pool.remove(link, 'was disconnected by shutdown');
        link.end({ code: grpc.status.UNAVAILABLE, reason: 'SHUTTING_DOWN', details: 'dispatch is shutting down' });
      }
    },
  };
  return pool;
}
