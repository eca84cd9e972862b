export { prepareArguments } from './prepare-arguments';
export type { PreparedArguments } from './prepare-arguments';
export { repairArguments } from './repair';
export { formatValidationErrors } from './validation-message';
