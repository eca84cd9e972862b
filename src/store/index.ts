export type {
  Store,
  SessionScope,
  StoredResult,
  ClaimOutcome,
  RecordState,
  LoopBlock,
  LoopStreak,
  BeginAttempt,
  SessionBudget,
  BeginAttemptResult,
  FinishAttempt,
  FinishAttemptResult,
  IdempotencyFinish,
  ResultEviction,
} from './store';
export { StoreUnavailableError } from './store';
export { claimRefusedMessage } from './store-refusal';
export type { StoreFailureReason } from './store-refusal';
export type { SessionEndListener, SessionEndListeners } from './session-end-listeners';
export { createMemoryStore } from './memory-store';
export { NO_STREAK } from './streak-index';
export { evictOldest, TRIM_TO } from './evict-oldest';
export { waterLevel } from './water-level';
export type { MemoryStoreOptions } from './memory-store-options';
export { streakOf } from './loop-window';
export type { WindowEntry } from './loop-window';
export { hashKeyMaterial, idempotencyKey, keyMaterial } from './idempotency-key';
export { localSessionKey } from './local-session-key';
export type { TextPage } from './spilled-text';
export { fullTextNotKeptWarning, isFullTextNotKeptWarning } from './spilled-text';
export { newResultHandle, handleSession, handleScope } from './result-handle';
