import type { CandidateCall } from './call-shapes';
import type { ParseFormat } from './types';

/** Calls found in one span `text[start, end)` of the input, and the format to report for them. */
export interface FoundCalls {
  readonly start: number;
  readonly end: number;
  readonly calls: readonly CandidateCall[];
  readonly format: Exclude<ParseFormat, 'none'>;
}

/**
 * Finds the calls of one dialect in a text (reasoning already blanked out), in order, with
 * spans that do not overlap. Each detector reads every character a bounded number of times.
 */
export type Detector = (text: string) => FoundCalls[];
