import type { JsonObject, TolerantValue } from './json-value';

/** An object or array a parse closed at its limit. */
export type ClosedContainer = JsonObject | TolerantValue[];

/**
 * A literal (`null`, `true`, `None`...) or number that ran to the end of the whole text, and the
 * object member it is (`holder` and `key`; neither for the parsed value itself). Nothing ended
 * it, so it may have gone on (`null` as the start of `nullable`, `12` of `123`): a call whose
 * arguments it is was cut off.
 */
export interface ScalarAtTextEnd {
  readonly holder?: JsonObject;
  readonly key?: string;
}

/**
 * Why a tolerant parse stopped: bad syntax, text ending inside a string or before a value,
 * nesting beyond the depth limit, or the caller's work budget spent.
 */
export type ParseFailureReason = 'syntax' | 'truncated' | 'depth' | 'budget';

/** A value parsed from `text[start, end)`. */
export interface ParsedValue {
  readonly ok: true;
  readonly value: TolerantValue;
  readonly start: number;
  readonly end: number;
  /**
   * The objects and arrays the limit closed, their closing braces or brackets missing where the
   * text ended after a complete member, innermost first; empty when the value closed itself. Each
   * may have been cut off before more members.
   */
  readonly containersClosedAtLimit: readonly ClosedContainer[];
  /**
   * Whether the limit was the end of the whole text: the objects it closed were then cut off
   * where the output ended, and what they hold may be incomplete. An earlier limit (a closing
   * tag, the next call's marker) is where the model ended them.
   */
  readonly limitEndsText: boolean;
  /** Set when the text ends in a literal or number of the value; see `ScalarAtTextEnd`. */
  readonly scalarAtTextEnd?: ScalarAtTextEnd;
}

/** A parse that failed at `at`, having read no further than that. */
export interface FailedValue {
  readonly ok: false;
  readonly reason: ParseFailureReason;
  readonly at: number;
  /**
   * Whether a string ran across the `softLimit` the caller gave: a parse stopped at that limit
   * would then have failed too, cut off inside the string.
   */
  readonly stringAcrossSoftLimit: boolean;
  /**
   * When the value is an array that failed in an element: just after its last complete element
   * (`[` then those elements parse as an array of them alone), or -1 when none was complete.
   */
  readonly elementsEnd: number;
  /**
   * Whether the value is an object that had a call's key (`name`, `function`, `arguments`,
   * `parameters`) before it failed: a broken call, whose arguments hold no calls.
   */
  readonly callKeys: boolean;
  /**
   * Where the containers inside the value began that were still open when it failed, but for
   * objects with a call's key (empty after a failure at the depth limit). Read on its own, each
   * would fail just as the value did, at `at`: a caller that tries again inside the value may
   * pass them over. Innermost first.
   */
  readonly unclosed: readonly number[];
}

/** Characters a caller lets the parser read across many parses; keeps repeated scans linear. */
export interface WorkBudget {
  remaining: number;
}

/** Optional inputs of `parseTolerantValue`. */
export interface TolerantParseOptions {
  /**
   * Charged with every character read, and for a parse that fails its first 4,096 characters
   * once more (many short failures are what hostile input is made of); once spent, parses fail
   * at once with `budget`.
   */
  readonly budget?: WorkBudget;
  /** A position to report strings running across (see `FailedValue.stringAcrossSoftLimit`). */
  readonly softLimit?: number;
  /** Whether to read Python's literals too: triple-quoted and raw strings, adjacent strings joined, tuples. */
  readonly python?: boolean;
}
