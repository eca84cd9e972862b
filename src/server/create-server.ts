import { setMaxListeners } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import { DispatchService } from '../../gen/dispatch/v1/dispatch_pb';
import { ToolRegistryService } from '../../gen/dispatch/v1/registry_pb';
import { WorkerService } from '../../gen/dispatch/v1/worker_pb';
import type { PipelineDeps } from '../pipeline';
import { type ParallelDispatcher, dispatchHandlers } from './dispatch-service';
import { decodeDispatchRequest } from './dispatch-request-codec';
import { encodeDispatchResponse } from './dispatch-response-codec';
import { decodeWorkerMessage } from './worker-message-codec';
import { encodeWorkAssignment } from './work-assignment-codec';
import { addService, serviceDefinition, unimplemented } from './grpc-adapter';
import { addHealthAndReflection } from './health-and-reflection';
import { guardClosingPings } from './closing-pings';
import { trackOpenSessions } from './open-sessions';
import { createTurnAdmission, type TurnCounts } from './turn-admission';
import { allowAll, type Authenticator } from './principal';
import { parseHandler } from './parse-service';
import { registryHandlers } from './registry-service';
import { eraseTenantHandler } from './erase-tenant';

/** Handlers that other parts of dispatch add to a service (Subscribe, Work, ...). */
export type ExtraHandlers = Partial<Record<'dispatch' | 'registry' | 'worker', grpc.UntypedServiceImplementation>>;

/** How to build a server around a pipeline. */
export interface ServerOptions {
  readonly deps: PipelineDeps;
  /** @default allowAll (loopback, no authentication) */
  readonly authenticate?: Authenticator;
  readonly credentials?: grpc.ServerCredentials;
  readonly parallel?: ParallelDispatcher;
  readonly extraHandlers?: ExtraHandlers;
  /** No authentication is configured (every caller tenant `default`): a per-tenant share is the whole bound. @default false */
  readonly singleTenant?: boolean;
}

/** A running dispatch server. */
export interface DispatchServer {
  readonly port: number;
  readonly deps: PipelineDeps;
  /**
   * Fires when this replica stops hosting long-lived streams (workers, subscribers), so that they
   * wind down: at the drain's start with a store replicas share; with a store of its own, once the
   * turns it runs have ended (they go on within the grace, and need their workers and subscribers),
   * or at the grace's end.
   */
  readonly draining: AbortSignal;
  /** Dispatch RPCs running now and refused so far for the turn bounds (limits.max_turns_*). */
  readonly turns: TurnCounts;
  /**
   * Stops accepting calls, lets calls in flight finish within `graceMs`, then cancels the rest.
   * Health turns NOT_SERVING first. With a store replicas share (Store.shared), a turn in flight
   * starts no more attempts (no next call, wave or retry): one with calls left ends UNAVAILABLE
   * SHUTTING_DOWN once its running attempts end; with a store of its own, it goes on.
   */
  shutdown(graceMs: number): Promise<void>;
}

/** Creates the gRPC server, binds `address` (port 0 picks a free one) and starts serving. */
export async function startServer(address: string, options: ServerOptions): Promise<DispatchServer> {
  const { deps } = options;
  const authenticate = options.authenticate ?? allowAll;
  const shutdownController = new AbortController();
  // Every Dispatch in flight listens for shutdown; there is no fixed bound on them.
  setMaxListeners(0, shutdownController.signal);
  const drainController = new AbortController();
  const hostingController = new AbortController();
  const admission = createTurnAdmission(deps.limits);
  const server = new grpc.Server({
    // dispatchd serves no channelz service: the per-call bookkeeping for it would be unread.
    'grpc.enable_channelz': 0,
    'grpc.max_receive_message_length': deps.limits.maxMessageBytes,
    'grpc.max_send_message_length': deps.limits.maxMessageBytes,
    // Per connection, nothing per call (see Limits.keepaliveTimeMs): pings find a dead client's
    // connection; a connection age (off by default) makes clients reconnect now and then.
    ...(deps.limits.keepaliveTimeMs > 0 && { 'grpc.keepalive_time_ms': deps.limits.keepaliveTimeMs, 'grpc.keepalive_timeout_ms': deps.limits.keepaliveTimeoutMs }),
    ...(deps.limits.maxConnectionAgeMs > 0 && { 'grpc.max_connection_age_ms': deps.limits.maxConnectionAgeMs }),
  });
  const extra = options.extraHandlers ?? {};
  addService(server, serviceDefinition(DispatchService, { dispatch: { decodeRequest: (bytes: Buffer) => decodeDispatchRequest(bytes, deps.limits.maxCallsPerTurn), encodeResponse: encodeDispatchResponse } }), {
    subscribe: unimplemented('Subscribe'),
    parseToolCalls: parseHandler(authenticate, deps.limits, deps.logger, deps.registry),
    resolveApproval: unimplemented('ResolveApproval'),
    listApprovals: unimplemented('ListApprovals'),
    eraseTenant: eraseTenantHandler(deps, authenticate),
    ...dispatchHandlers({ deps, authenticate, shutdown: shutdownController.signal, draining: deps.store.shared ? drainController.signal : undefined, parallel: options.parallel, admission, singleTenant: options.singleTenant }),
    ...extra.dispatch,
  });
  addService(server, serviceDefinition(ToolRegistryService), {
    getToolStats: unimplemented('GetToolStats'),
    ...registryHandlers(deps.registry, authenticate, deps.logger, deps.limits),
    ...extra.registry,
  });
  addService(server, serviceDefinition(WorkerService, { work: { decodeRequest: decodeWorkerMessage, encodeResponse: encodeWorkAssignment } }), { work: unimplemented('Work'), ...extra.worker });
  const health = addHealthAndReflection(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(address, options.credentials ?? grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  if (deps.limits.keepaliveTimeMs > 0) guardClosingPings(server, deps.logger);
  const sessions = trackOpenSessions(server, deps.logger);
  health.serving(true);
  let stopping: Promise<void> | undefined;
  return {
    port,
    deps,
    draining: hostingController.signal,
    turns: admission,
    shutdown(graceMs) {
      stopping ??= new Promise<void>((resolve) => {
        health.stop();
        drainController.abort();
        const idle = deps.store.shared ? undefined : whenIdle(admission, () => hostingController.abort());
        if (!idle) hostingController.abort();
        const force = setTimeout(() => {
          if (admission.inFlight > 0) {
            deps.logger.warn("drain grace ended with turns still running: they are cut off now (their clients get UNAVAILABLE SHUTTING_DOWN, naming the calls that had finished; a side-effecting call still running is OUTCOME_UNKNOWN)", { graceMs, turns: admission.inFlight, callsAtMost: admission.callsInFlight });
          }
          clearInterval(idle);
          hostingController.abort();
          shutdownController.abort();
          setTimeout(() => {
            server.forceShutdown();
            sessions.destroyAll();
          }, 200).unref();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(force);
          clearInterval(idle);
          shutdownController.abort();
          resolve();
        });
      });
      return stopping;
    },
  };
}

/** Calls `then` once no turn holds a place (checked every 10 ms); returns the check's timer. */
function whenIdle(turns: TurnCounts, then: () => void): NodeJS.Timeout {
  const timer = setInterval(() => {
    if (turns.inFlight > 0) return;
    clearInterval(timer);
    then();
  }, 10);
  timer.unref();
  return timer;
}
