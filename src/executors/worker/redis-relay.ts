import { answerWithin } from '../../pipeline';
import { closeWithin, createOrderedPublisher, namedConnector, createWatchedSubscriber, PublishStalledError } from '../../store/redis';
import { randomUUID } from 'node:crypto';
import { ErrorKind } from '../../../gen/dispatch/v1/dispatch_pb';
import type { ToolSpec } from '../../../gen/dispatch/v1/tool_pb';
import { DispatchError } from '../../errors';
import type { Logger } from '../../log';
import { abortHookOf, unlessAborted } from '../../pipeline/signals';
import type { ToolRegistry } from '../../registry';
import { createEndedAssignments } from './ended-assignments';
import { createHostWatch, subscriberCount } from './host-watch';
import { fromWire, parseRelayMessage, toWire, type RelayMessage } from './relay-messages';
import { createRouteTable } from './route-table';
import { createSpecSync, SPECS_KEY, type HostedListener } from './spec-sync';
import { noWorkerError, redisReplyCode, relayDown, relayLostAfterSend, triedElsewhere } from './worker-errors';
import { createListenerChecks } from './relay-listeners';
import { trackClients } from './relay-close';
import { startInBackground, watchConnectionLoss } from './relay-start';
import { timerMs } from './timer-delay';
import type { WorkerRelay } from './worker-executor';
import type { ResolvedWorkerOptions } from './worker-options';
import type { AssignmentRequest, WorkerPool } from './worker-pool';

/** What the Redis relay needs. */
export interface RedisRelayOptions {
  readonly url: string;
  readonly pool: WorkerPool;
  readonly registry: ToolRegistry;
  readonly logger: Logger;
  readonly options: ResolvedWorkerOptions;
  /** Told when a worker hosting a tool connected to another replica, or (`again`) hosts it still there (see SpecSync.announceHosted). */
  readonly onHosted?: HostedListener;
  /**
   * The worker tools whose breakers are open here. When this replica's subscription may have
   * missed announcements (it moved, or its connection dropped), each that another replica hosts
   * now is told to `onHosted`, as its announcement would have (not `again`: its worker may be new).
   */
  readonly openTools?: () => readonly { readonly tenant: string; readonly tool: string }[];
}

/** A relay over Redis that also shares worker tool specs between replicas. */
export interface RedisRelay extends WorkerRelay {
  readonly replicaId: string;
  publishSpecs(tenant: string, specs: readonly ToolSpec[]): void;
  /**
   * Forgets a tool being removed (RemoveTool), so that no replica registers it again from the
   * shared specs: resolves once that is written in Redis and announced (see SpecSync.remove).
   */
  forgetSpec(tenant: string, name: string): Promise<void>;
}

interface Waiting {
  settle(output: string | undefined, error?: DispatchError): void;
}
const replicaChannel = (replica: string) => `dispatch:worker:replica:${replica}`;

/** How long a cancel without a deadline (from a replica of an older version) is remembered, in ms. */
const CANCEL_MEMORY_MS = 60_000;

/**
 * Routes calls to workers connected to other replicas: each replica advertises the tools its
 * workers host (a hash with a TTL refreshed on a timer); a replica with no local worker publishes
 * the assignment on the owner's channel and awaits the reply on its own, up to the deadline.
 */
export async function createRedisRelay(o: RedisRelayOptions): Promise<RedisRelay> {
  const replicaId = randomUUID();
  // Through the store's connector: standalone, Sentinel and Cluster URLs and DISPATCH_REDIS_PASSWORD
  // alike; commands queue while Redis is away rather than failing start-up.
  const { connect, endUnconnected } = trackClients(namedConnector(o.url, 'workers', { queueWhileDown: true, logger: o.logger }));
  const redis = connect();
  const routes = createRouteTable(redis, replicaId, o.options.routeTtlMs);
  const specs = createSpecSync(redis, replicaId, o.registry, o.logger, o.onHosted);
  const inflight = new Map<string, AbortController>();
  const waiting = new Map<string, Waiting>();
  const warn = (what: string) => (error: Error) => o.logger.warn(what, { error: error.message });
  // Through one node on a Cluster, so that a cancel does not overtake its assignment (but for
  // once, when that node stalls and the next go through another).
  const publisher = createOrderedPublisher(redis, { stallMs: o.options.publishStallMs });
  // A subscription that stops hearing its probes moves (see createWatchedSubscriber): calls sent to
  // this replica meanwhile end at their deadline, and the specs shared meanwhile are read again.
  const { probeIntervalMs, maxMissedProbes } = o.options;
  const sub = createWatchedSubscriber({ name: 'worker relay', connect, publisher, logger: o.logger, probeIntervalMs, maxMissedProbes });
  const unlessLost = watchConnectionLoss(redis);
  const send = (replica: string, message: RelayMessage) => publisher.publish(replicaChannel(replica), JSON.stringify(message));
  // A message whose master stalled may still arrive: one that does no harm twice (a reply, a
  // cancel, a read-only assignment) is sent again, through the next master.
  const sendAgainIfStalled = (replica: string, message: RelayMessage) =>
    send(replica, message).catch((error: unknown) => {
      if (error instanceof PublishStalledError) return send(replica, message);
      throw error;
    });
  const ended = createEndedAssignments(o.options.maxRememberedAssignments);

  function runInbound(id: string, from: string, request: AssignmentRequest): void {
    // A copy of one running or ended here (sent again after a stalled publish), or one whose
    // cancel came first (the cancel overtook it): the caller is not waiting for this one.
    if (inflight.has(id) || ended.has(id)) return;
    if (!(request.deadline > Date.now())) {
      // Held somewhere (a stalled node) past its deadline: the caller has given up or is about to.
      const late = new DispatchError(ErrorKind.TIMEOUT, `the call reached the replica hosting "${request.tool}" after its deadline; it was not executed`, { phase: 'before', recoverable: true });
      ended.remember(id, Date.now() + o.options.relayGraceMs);
      sendAgainIfStalled(from, { t: 'reply', id, error: toWire(late) }).catch(warn('a worker reply to another replica was lost'));
      return;
    }
    const controller = new AbortController();
    inflight.set(id, controller);
    const timer = setTimeout(() => controller.abort(new Error('deadline passed')), timerMs(request.deadline + o.options.relayGraceMs));
    o.pool
      .assign(request, abortHookOf(controller.signal))
      .then((output) => sendAgainIfStalled(from, { t: 'reply', id, output }), (error: unknown) => sendAgainIfStalled(from, { t: 'reply', id, error: toWire(error) }))
      .catch(warn('a worker reply to another replica was lost'))
      .finally(() => {
        clearTimeout(timer);
        inflight.delete(id);
        ended.remember(id, request.deadline + o.options.relayGraceMs);
      });
  }

  sub.onMessage((channel, text) => {
    if (channel === SPECS_KEY) return specs.receive(text);
    const message = parseRelayMessage(text);
    if (message?.t === 'assign') runInbound(message.id, message.from, message.request);
    else if (message?.t === 'cancel') {
      const running = inflight.get(message.id);
      if (running) running.abort(new Error('cancelled by the calling replica'));
      else if (!ended.has(message.id)) ended.remember(message.id, (typeof message.deadline === 'number' ? message.deadline : Date.now() + CANCEL_MEMORY_MS) + o.options.relayGraceMs);
    }
    else if (message?.t === 'reply') waiting.get(message.id)?.settle(message.output, message.error && fromWire(message.error));
  });
  let closed = false;
  // Start-up does not wait for Redis beyond a bound (see startInBackground).
  const link = await startInBackground({ subscribe: () => sub.subscribe(replicaChannel(replicaId), SPECS_KEY), load: () => specs.load(), stopped: () => closed, logger: o.logger });
  const announceHosted = (tenant: string, tool: string) => void specs.announceHosted(tenant, tool).catch(warn('telling other replicas of a worker that connected failed'));
  sub.onMoved(() => {
    void specs.load().catch(warn('could not load the worker tools shared by other replicas'));
    // A worker that connected to another replica meanwhile was announced unheard (announceHosted).
    for (const { tenant, tool } of o.openTools?.() ?? []) {
      routes.lookup(tenant, tool).then((hosts) => {
        if (hosts.length > 0 && !closed) o.onHosted?.(tenant, tool, false);
      }, warn('could not read where a worker tool is hosted'));
    }
    // And this one was deaf: another replica's call (its breaker's probe) may have found no one
    // listening here, and its breaker opened again; its announcement, made meanwhile, may have been
    // lost. Told `again`: a breaker there that the tool's own failures opened stays open.
    specs.announceAgain(o.pool.hosted()).catch(warn('telling other replicas of the workers connected here failed'));
  });
  o.pool.onHostedChange((tenant, tool, hosted) => {
    if (closed) return;
    (hosted ? routes.advertise([{ tenant, tool }]) : routes.withdraw(tenant, tool)).catch(warn('worker route update failed'));
    if (hosted) announceHosted(tenant, tool);
  });
  routes.advertise(o.pool.hosted()).catch(warn('worker route update failed'));
  const refresh = setInterval(() => routes.advertise(o.pool.hosted()).catch(warn('worker route refresh failed')), o.options.advertiseIntervalMs);
  refresh.unref();

  const { mayHaveHeard, mayBeSent } = createListenerChecks(redis, (replica) => subscriberCount(redis, replicaChannel(replica), o.options.subscriberCountTimeoutMs));

  // A replica that dies while running a call for this one fails the call (its outcome unknown)
  // after maxMissedProbes + 2 counts that find it gone (4 over 3 s by default), not at its deadline.
  const hostWatch = createHostWatch({
    count: (replica) => subscriberCount(redis, replicaChannel(replica), o.options.subscriberCountTimeoutMs),
    intervalMs: o.options.probeIntervalMs,
    missesToGone: o.options.maxMissedProbes + 2,
    logger: o.logger,
    onGone: (id, tool) => waiting.get(id)?.settle(undefined, new DispatchError(ErrorKind.UNAVAILABLE, `the dispatch replica running "${tool}" on its worker stopped while running the call`, { phase: 'during', recoverable: true })),
  });

  function awaitReply(id: string, replica: string, request: AssignmentRequest, signal: AbortSignal): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const onAbort = () => {
        cleanup();
        sendAgainIfStalled(replica, { t: 'cancel', id, deadline: request.deadline }).catch(warn('a cancel to another replica was lost'));
        reject(signal.reason);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new DispatchError(ErrorKind.TIMEOUT, `the replica hosting "${request.tool}" did not answer by the deadline`, { phase: 'during' }));
      }, timerMs(request.deadline + o.options.relayGraceMs));
      const cleanup = () => {
        waiting.delete(id);
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      waiting.set(id, {
        settle(output, error) {
          cleanup();
          if (error) reject(error);
          else resolve(output ?? '');
        },
      });
    });
  }

  return {
    replicaId,
    async forward(request, signal, delivery) {
      delivery?.('pending');
      if (signal.aborted) throw signal.reason;
      if (!link.subscribed()) throw relayDown(new Error('not subscribed to its reply channel yet'));
      let replicas: string[];
      try {
        // The connection queues while Redis is away: the lookup is raced against the call's end and the connection's loss.
        if (redis.status !== 'ready') throw new Error(`the connection to Redis is ${redis.status}`);
        const lookup = await unlessAborted(unlessLost(routes.lookup(request.tenant, request.tool)), signal);
        if (lookup === undefined) throw signal.reason;
        replicas = lookup;
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        throw relayDown(error);
      }
      const start = Math.floor(Math.random() * Math.max(1, replicas.length));
      let refused: DispatchError | undefined;
      for (let i = 0; i < replicas.length; i++) {
        const replica = replicas[(start + i) % replicas.length]!;
        if (!(await unlessAborted(mayBeSent(replica, request), signal))) {
          if (signal.aborted) throw signal.reason;
          continue;
        }
        // Lost since the lookup: the PUBLISH would wait in the connection's queue (and be sent late).
        if (redis.status !== 'ready') throw relayDown(new Error(`the connection to Redis is ${redis.status}`));
        const id = randomUUID();
        const reply = awaitReply(id, replica, request, signal);
        // The reply can fail (cancel, deadline) while the assignment is still on its way: that
        // ends the wait for it, and the failure is thrown below.
        const replied = reply.then(
          () => true,
          () => true,
        );
        let receivers: number | boolean;
        // Written at once when ready: it may then reach Redis even if the publish fails.
        const sent = publisher.connected();
        try {
          const deliver = request.readOnly ? sendAgainIfStalled : send;
          delivery?.('sent');
          receivers = await Promise.race([unlessLost(deliver(replica, { t: 'assign', id, from: replicaId, request })), replied]);
        } catch (error) {
          // The assignment may still arrive (a master that stalled; a connection lost after the
          // PUBLISH was written: ioredis sends it again once it reconnects, and a Cluster node may
          // have taken it). A side-effecting one's reply is awaited, up to the deadline (the hosting
          // replica runs no copy twice); a read-only one written fails at once, saying it may have
          // run (relayLostAfterSend: retried, harmless). Only one never written, or refused by Redis
          // (an error reply, ReplyError: BUSY, NOPERM; before, told "may have run"), was not executed.
          const written = sent && redisReplyCode(error) === undefined;
          if (error instanceof PublishStalledError || (written && !request.readOnly)) receivers = true;
          else {
            const refusal = written ? relayLostAfterSend(request.tool, error) : relayDown(error);
            // Cancelled too, or the hosting replica ran it until its deadline beside the retry, its
            // reply dropped. ioredis sends its unanswered commands again before its offline queue,
            // so the cancel follows the assignment; one arriving first is remembered (runInbound).
            if (written) sendAgainIfStalled(replica, { t: 'cancel', id, deadline: request.deadline }).catch(warn('a cancel to another replica was lost'));
            waiting.get(id)?.settle(undefined, refusal);
            await replied;
            throw refusal;
          }
        }
        if (receivers === 0 && !(await Promise.race([mayHaveHeard(replica, request), replied]))) {
          waiting.get(id)?.settle('');
          await reply;
          continue;
        }
        const unwatch = hostWatch.watch(replica, id, request.tool);
        try {
          return await reply;
        } catch (error) {
          refused = triedElsewhere(error, refused);
        } finally {
          unwatch();
        }
      }
      throw refused ?? noWorkerError(request.tool);
    },
    publishSpecs(tenant, shared) {
      specs.publish(tenant, shared).catch(warn('sharing worker tools with other replicas failed'));
    },
    forgetSpec: (tenant, name) => specs.remove(tenant, name),
    // Redis away: a route lookup would wait for it (its connection queues commands) until the deadline.
    reachable: () => link.subscribed() && redis.status === 'ready',
    async close() {
      closed = true;
      link.stop();
      clearInterval(refresh);
      hostWatch.close();
      for (const controller of inflight.values()) controller.abort(new Error('replica shutting down'));
      for (const w of [...waiting.values()]) w.settle(undefined, new DispatchError(ErrorKind.UNAVAILABLE, 'dispatch is shutting down', { phase: 'during', recoverable: true }));
      // The connection queues while Redis is away, with no command timeout: neither waits longer than a PUBLISH
      // may, nor at all with Redis away (the routes lapse after their TTL), whose connections end at once (trackClients).
      if (redis.status === 'ready') await answerWithin(Promise.all(o.pool.hosted().map(({ tenant, tool }) => routes.withdraw(tenant, tool).catch(() => undefined))), o.options.publishStallMs);
      await endUnconnected();
      await Promise.all([sub.close(), closeWithin(redis, o.options.publishStallMs)]);
    },
  };
}
