import { shortHash } from '../../json';
import type { FinishAttempt } from '../store';
import type { SessionKeys } from './session-keys';
import { NO_SPILL, spillArguments } from './spill-chunks';
import { withoutLostHandle, type ResolvedSpillLimits } from './spill-limits';

/** The store's settings the finish step writes with. */
export interface FinishSettings {
  readonly windowTtl: number;
  readonly maxRecords: number;
  readonly maxResults: number;
  readonly spillLimits: ResolvedSpillLimits;
}

/**
 * The keys and arguments of finish-attempt.lua for `step` (the order its header gives); with
 * `spillTooLong`, the spill left out and the completion kept without its handle. `opId` is the
 * op's id in the loop window; `turnBegan`, when the step's turn began (TurnBegins), if known.
 */
export function finishArguments(step: FinishAttempt, keys: SessionKeys, opId: string, settings: FinishSettings, spillTooLong: boolean, turnBegan?: number): (string | number)[] {
  const { windowTtl, maxRecords, maxResults, spillLimits } = settings;
  const spill = spillTooLong ? undefined : step.spill;
  const chunks = spill ? spillArguments(spill.text) : NO_SPILL;
  const idem = spillTooLong ? withoutLostHandle(step) : step.idempotency;
  const bare = spill ? withoutLostHandle(step, chunks.totalChars) : undefined;
  const { record, memory } = step;
  return [
    keys.window,
    keys.memory,
    keys.recordIndex,
    keys.resultIndex,
    idem ? keys.record(idem.key) : keys.window,
    spill ? keys.result(spill.handle) : keys.window,
    step.unusedProbe ? keys.probe(opId) : keys.window,
    keys.ended,
    opId,
    record ? `${!record.failed ? 0 : record.counts === false ? 2 : record.refused ? 3 : 1}${shortHash(record.result)}` : '',
    record?.window ?? 1,
    windowTtl,
    idem?.action === 'complete' && idem.late ? 'late' : (idem?.action ?? ''),
    idem?.action === 'complete' ? JSON.stringify(idem.result) : idem?.action === 'release' ? (idem.owner ?? '') : '',
    idem && idem.action !== 'release' ? idem.ttlSeconds : 0,
    maxRecords,
    spill ? (spillLimits.maxSpillTtlSeconds === 0 ? spill.ttlSeconds : Math.min(spill.ttlSeconds, spillLimits.maxSpillTtlSeconds)) : '',
    chunks.totalChars,
    maxResults,
    memory ? memory.ttlSeconds : '',
    memory?.entry ?? '',
    memory?.max ?? 1,
    spillLimits.spillMemoryShare,
    bare !== idem && bare?.action === 'complete' ? JSON.stringify(bare.result) : '',
    chunks.chunkPoints,
    record?.waitMs === undefined ? '' : `${Math.ceil(record.waitMs)}${record.retry ? 'r' : ''}`,
    step.unusedProbe ?? '',
    idem && idem.action !== 'release' ? (idem.owner ?? '') : '',
    turnBegan ?? '',
    ...chunks.chunks,
  ];
}
