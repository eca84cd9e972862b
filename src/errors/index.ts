export { DispatchError, kindName, MAX_ERROR_MESSAGE_CHARS, serverTrouble } from './dispatch-error';
export type { DispatchErrorOptions, FailurePhase } from './dispatch-error';
export { toErrorJson, errors } from './error-json';
export type { ErrorJson } from './error-json';
export { breakerOpenSuggestion, RAN_UNREAD, suggestionFor } from './suggestions';
export type { FailureFacts } from './suggestions';
export { HardError } from './hard-error';
export type { HardErrorReason } from './hard-error';
