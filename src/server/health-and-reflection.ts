import * as grpc from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation, service as healthService } from 'grpc-health-check';
import { terminalText } from '../events/terminal-text';
import { shortened } from '../pipeline/bound-result';
import { indexEnumValues, reflectedFiles } from './reflected-files';

/** The services whose health is reported. */
export const HEALTH_SERVICES = ['', 'dispatch.v1.DispatchService'] as const;

const reported = (service: unknown): boolean => (HEALTH_SERVICES as readonly unknown[]).includes(service);

/** The health service's state, as the server changes it. */
export interface HealthControl {
  serving(up: boolean): void;
  /**
   * The drain has begun: every service turns NOT_SERVING, and each open `Watch` stream is sent
   * that status and then ended (OK). grpc-health-check never ends a Watch itself, so one open
   * stream (a client-side balancer's, a sidecar's) held the draining server until its grace ended.
   */
  stop(): void;
}

/** Adds grpc.health.v1 (NOT_SERVING until `serving(true)`) and server reflection. */
export function addHealthAndReflection(server: grpc.Server): HealthControl {
  const health = new HealthImplementation(Object.fromEntries(HEALTH_SERVICES.map((s) => [s, 'NOT_SERVING' as const])));
  // The package's own handlers, wrapped so that the open Watch streams are known (and can be ended).
  let handlers: grpc.UntypedServiceImplementation | undefined;
  health.addToServer({ addService: (_definition: unknown, implementation: grpc.UntypedServiceImplementation) => (handlers = implementation) } as unknown as grpc.Server);
  const watches = new Set<grpc.ServerWritableStream<unknown, unknown>>();
  let stopped = false;
  const watch = handlers!.watch as grpc.handleServerStreamingCall<unknown, unknown>;
  const check = handlers!.check as grpc.handleUnaryCall<unknown, unknown>;
  // Health needs no credentials and its request names any service, up to max_message_bytes: the
  // package keyed its Watch listeners by that name for good (40 Watches of 1 MiB names kept 42 MB)
  // and its Check echoed the name whole in grpc-message (100 KB never reached the client, which
  // waited for its deadline). The services reported are fixed, so others are answered here.
  server.addService(healthService, {
    ...handlers!,
    check(call: grpc.ServerUnaryCall<{ service?: unknown }, unknown>, callback: grpc.sendUnaryData<unknown>) {
      if (reported(call.request.service)) return void check(call, callback);
      const name = typeof call.request.service === 'string' ? call.request.service : '';
      callback({ code: grpc.status.NOT_FOUND, details: `Health status unknown for service "${terminalText(shortened(name, 200))}"` });
    },
    watch(call: grpc.ServerWritableStream<{ service?: unknown }, unknown>) {
      // An unknown service stays SERVICE_UNKNOWN (the stream open, as the health protocol has it).
      if (reported(call.request.service)) watch(call);
      else call.write({ status: 'SERVICE_UNKNOWN' });
      if (stopped) return void call.end();
      watches.add(call);
      call.on('cancelled', () => watches.delete(call));
    },
  });
  const reflection = new ReflectionService(reflectedFiles());
  indexEnumValues(reflection);
  reflection.addToServer(server);
  const setAll = (up: boolean) => {
    for (const service of HEALTH_SERVICES) health.setStatus(service, up ? 'SERVING' : 'NOT_SERVING');
  };
  return {
    serving: setAll,
    stop() {
      stopped = true;
      setAll(false);
      for (const call of watches) call.end();
      watches.clear();
    },
  };
}
