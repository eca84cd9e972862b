import * as grpc from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation, service as healthService } from 'grpc-health-check';
import { indexEnumValues, reflectedFiles } from './reflected-files';

/** The services whose health is reported. */
export const HEALTH_SERVICES = ['', 'dispatch.v1.DispatchService'] as const;

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
  server.addService(healthService, {
    ...handlers!,
    watch(call: grpc.ServerWritableStream<unknown, unknown>) {
      watch(call);
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
