import { canonicalJson, readPointer } from '../json';
import type { ResolvedTool } from '../registry';

/**
 * The loop-window operation of a call: the tool, NUL, and the canonical JSON of its primary
 * parameter (all arguments when it names none). Each store keys it as it needs (see `Store`).
 */
export function loopOp(tool: ResolvedTool, args: unknown, canonicalArgs = canonicalJson(args)): string {
  const param = tool.spec.primaryParameter === '' ? canonicalArgs : canonicalJson(readPointer(args, tool.spec.primaryParameter) ?? null);
  return `${tool.name}\u0000${param}`;
}
