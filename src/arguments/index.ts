export { prepareArguments } from './prepare-arguments';
export type { PreparedArguments } from './prepare-arguments';
export { defaultsToApply, repairArguments } from './repair';
export { formatValidationErrors } from './validation-message';
