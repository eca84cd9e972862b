import { unparsedRefusal } from '../arguments';
import type { Limits } from '../options';
import { canonicalJson, readPointer } from '../json';
import type { ResolvedTool } from '../registry';

/**
 * The loop-window operation of a call: the tool, NUL, and the canonical JSON of its primary
 * parameter (all arguments when it names none). Each store keys it as it needs (see `Store`).
 */
export function loopOp(tool: ResolvedTool, args: unknown, canonicalArgs?: string): string {
  return opOf(tool.name, tool.spec.primaryParameter, args, canonicalArgs);
}

function opOf(name: string, primaryParameter: string, args: unknown, canonicalArgs?: string): string {
  const param = primaryParameter === '' ? (canonicalArgs ?? canonicalJson(args)) : canonicalJson(readPointer(args, primaryParameter) ?? null);
  return `${name}\u0000${param}`;
}

/**
 * The loop operation of a call refused before its arguments were taken (UNKNOWN_TOOL, keyed by the
 * name asked for; INVALID_ARGUMENTS): its arguments `text` read as JSON, then keyed as loopOp keys
 * them (by `primaryParameter`, '' for all of them), so that the same call sent again, in any key
 * order, is the same operation. Text its reading refuses unread (too long, too deep) or that is no
 * JSON is keyed as it was sent: parsing it again would cost what the refusal spared.
 */
export function refusedCallOp(name: string, primaryParameter: string, text: string, limits: Pick<Limits, 'maxArgumentBytes' | 'maxArgumentDepth'>): string {
  if (unparsedRefusal(text, limits) !== undefined) return `${name}\u0000${text}`;
  let args: unknown;
  try {
    args = text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    return `${name}\u0000${text}`;
  }
  return opOf(name, primaryParameter, args);
}
