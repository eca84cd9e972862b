export { createServiceClient, createDispatchClient, createRegistryClient, createWorkerClient } from './clients';
export type { CallOptions, ServiceClient } from './clients';
