import type { CandidateCall } from './call-shapes';
import type { WorkBudget } from './tolerant-json';
import type { ParseFormat } from './types';

/** Calls found in one span `text[start, end)` of the input, and the format to report for them. */
export interface FoundCalls {
  readonly start: number;
  readonly end: number;
  readonly calls: readonly CandidateCall[];
  readonly format: Exclude<ParseFormat, 'none'>;
  /**
   * Set when the calls are to tools the model's host provides (gpt-oss's `browser.search`,
   * `python`), or name what may be no tool at all (GLM's bare `None`, a null the template
   * rendered): they are returned only when `offeredTools` names them, never when any tool is
   * taken (an empty list).
   */
  readonly requiresOffer?: true;
}

/**
 * Finds the calls of one dialect in a text (reasoning already blanked out), in order, with
 * spans that do not overlap. Lazily: the caller stops pulling once it has all the calls it will
 * take. Outside its parses a detector reads each character a bounded number of times; its
 * parses are charged to `budget` and stop when it is spent.
 */
export type Detector = (text: string, budget: WorkBudget) => Iterable<FoundCalls>;
