export { prepareArguments, unparsedRefusal } from './prepare-arguments';
export type { ParsedText, PreparedArguments } from './prepare-arguments';
export { watchDefaults } from './defaults-to-apply';
export type { DefaultsWatch } from './defaults-to-apply';
export { repairArguments } from './repair';
export type { RepairOptions, RepairResult } from './repair';
export { formatValidationErrors } from './validation-message';
