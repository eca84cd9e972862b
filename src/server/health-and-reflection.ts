import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation } from 'grpc-health-check';
import { join } from 'node:path';
import { projectRoot } from './project-root';

/** The services whose health is reported. */
export const HEALTH_SERVICES = ['', 'dispatch.v1.DispatchService'] as const;

/** Adds grpc.health.v1 (NOT_SERVING until `serving(true)`) and server reflection. */
export function addHealthAndReflection(server: grpc.Server): { serving(up: boolean): void } {
  const health = new HealthImplementation(Object.fromEntries(HEALTH_SERVICES.map((s) => [s, 'NOT_SERVING' as const])));
  health.addToServer(server);
  const protoDir = join(projectRoot(), 'proto');
  const files = ['dispatch/v1/dispatch.proto', 'dispatch/v1/registry.proto', 'dispatch/v1/worker.proto'];
  new ReflectionService(loadSync(files, { includeDirs: [protoDir] })).addToServer(server);
  return {
    serving(up) {
      for (const service of HEALTH_SERVICES) health.setStatus(service, up ? 'SERVING' : 'NOT_SERVING');
    },
  };
}
