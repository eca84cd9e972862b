import type { ExecutorContext } from '../executors';
import type { ResolvedTool } from '../registry';
import { cutUnits } from './bound-result';
import type { MemoHit } from './memo-hit';

/** One execution of a tool, as middleware sees it. */
export interface Invocation {
  readonly tool: ResolvedTool;
  readonly args: unknown;
  readonly ctx: ExecutorContext;
  /**
   * The memo cache's entry for the call, when the attempt skipped its concurrency slot and rate
   * turn because the cache held it: memoize serves it even if the entry has gone since (its TTL,
   * the least recently used), unless its resource was written or a session ended since the peek
   * (`memoStillServes`). The pipeline checks the same just before, synchronously, and otherwise
   * takes the slot and turn first.
   */
  readonly memoized?: MemoHit;
}

/** What an execution produced. */
export interface ToolOutput {
  readonly text: string;
  /** Served from the memoize cache. */
  readonly cached?: boolean;
  readonly warnings?: readonly string[];
}

export type ToolHandler = (invocation: Invocation) => Promise<ToolOutput>;

/** A stage around tool execution. */
export type Middleware = (next: ToolHandler) => ToolHandler;

/**
 * Wraps `core` in `middleware`; the first registered is outermost, so it sees the call first and
 * the output last (connect-es `applyInterceptors`).
 */
export function applyMiddleware(core: ToolHandler, middleware: readonly Middleware[]): ToolHandler {
  return middleware.reduceRight<ToolHandler>((next, stage) => stage(next), core);
}

/** The warning of an output capOutput cut at `maxChars` (limits.max_tool_output_chars). */
export const outputCutWarning = (maxChars: number): string => `the tool's output was cut at ${maxChars} characters before bounding`;

/**
 * Whether capOutput cut `output` at `maxChars`: its warning says so, and it stays with the output
 * through the memo cache, so a cached hit of a cut output is as cut.
 */
export const outputWasCut = (output: ToolOutput, maxChars: number): boolean => output.warnings?.includes(outputCutWarning(maxChars)) ?? false;

/**
 * Cuts an output longer than `maxChars`, with a warning that says so: the innermost stage, run in
 * the core handler's own continuation, so no tool can flood the server. The result is `truncated`
 * then, even when its tool's max_result_chars holds what is left (the rest is not kept anywhere).
 */
export function capOutput(output: ToolOutput, maxChars: number): ToolOutput {
  return output.text.length <= maxChars ? output : { ...output, text: cutUnits(output.text, maxChars), warnings: [...(output.warnings ?? []), outputCutWarning(maxChars)] };
}
