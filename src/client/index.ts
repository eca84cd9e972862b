export { createServiceClient, createDispatchClient, createRegistryClient, createWorkerClient, DEFAULT_CHANNEL_OPTIONS, KEEPALIVE_CHANNEL_OPTIONS } from './clients';
export type { CallOptions, ServiceClient } from './clients';
export { allPages, MAX_PAGES } from './all-pages';
export { errorReason } from './error-reason';
