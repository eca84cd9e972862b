import { callFromParts } from './call-shapes';
import type { FoundCalls } from './found-calls';
import type { JsonObject } from './json-value';
import { createInvokeValueEnds, lengthOf, type InvokeTags } from './invoke-value-ends';
import { skipSpace } from './marker-finder';
import { createTokenFinder, tokenAt, tokenBefore, type Spellings } from './special-tokens';
import { readTagAttributes } from './tag-attributes';
import type { TextParameterLookup } from './types';
import { scanBlocks, type Block, type ValueEnds } from './xml-blocks';
import { parameterValue, readParameter } from './xml-parameter-value';

/** A dialect of `<invoke name="NAME"><parameter name="key">value</parameter></invoke>` calls. */
export interface InvokeDialect {
  readonly tags: InvokeTags;
  readonly format: Extract<FoundCalls['format'], 'deepseek_dsml' | 'minimax_xml' | 'anthropic_xml'>;
  /**
   * Whether a call counts only inside its block: right after the block's opening tag, or after
   * another call of the block with only whitespace between. MiniMax's plain `<invoke>` may be
   * any XML's; DSML's tags are its own.
   */
  readonly inBlockOnly: boolean;
}

/** No calls: a generator that ends at once. */
function* noCalls(): Generator<FoundCalls> {}

/** One parameter of a call: its key, whether its value is text as written, and where the value lies. */
interface Parameter {
  readonly key: string;
  readonly text: boolean;
  readonly from: number;
  readonly to: number;
}

/**
 * The calls of a dialect, their arguments read only when `withArguments` (else `{}`: spans alone
 * are wanted). A call needs its closing `invoke` tag: one cut off or broken is no call and its
 * text stays; the search goes on where it broke, so each character is read a bounded number of
 * times. A value is read as `readParameter` reads it, by `textParameters` when given, unless its
 * tag says `string="true"` (DSML's): then it is the text exactly as written.
 */
export function scanInvokes(text: string, dialect: InvokeDialect, withArguments: boolean, textParameters?: TextParameterLookup): Generator<FoundCalls> {
  const { tags, format, inBlockOnly } = dialect;
  // A call outside its block, where it counts for none, is not read; nor is a text with no call tag.
  const holds = (spellings: Spellings): boolean => spellings.some((spelling) => text.includes(spelling));
  if (!holds(tags.invokeOpen) || (inBlockOnly && !holds(tags.blockOpen))) return noCalls();
  const valueEnds = createInvokeValueEnds(text, tags);
  let previousEnd = 0;
  let blockOpen = false;
  const inBlock = (open: number): boolean =>
    tokenBefore(text, open, previousEnd, tags.blockOpen) !== open || (blockOpen && skipSpace(text, previousEnd, open) === open);
  const nameAt = (open: number): number => open + lengthOf(tags.invokeOpen);
  return scanBlocks(
    createTokenFinder(text, tags.invokeOpen),
    (open) => (inBlockOnly && !inBlock(open) ? { kind: 'broken', at: nameAt(open) } : readCall(text, tags, nameAt(open), valueEnds, withArguments, textParameters)),
    (open, call, callEnd) => {
      const start = tokenBefore(text, open, previousEnd, tags.blockOpen);
      const inside = start !== open || inBlock(open);
      const after = skipSpace(text, callEnd, text.length);
      const close = tags.blockClose.find((spelling) => text.startsWith(spelling, after));
      previousEnd = close === undefined ? callEnd : after + close.length;
      blockOpen = inside && close === undefined;
      return { start, end: previousEnd, calls: [call], format };
    },
  );
}

/** The call whose `invoke` tag name ends at `from`, up to and including its closing `invoke` tag. */
function readCall(text: string, tags: InvokeTags, from: number, valueEnds: ValueEnds, withArguments: boolean, textParameters: TextParameterLookup | undefined): Block {
  const invoke = readTagAttributes(text, from);
  if (invoke.kind === 'broken') return invoke;
  const name = invoke.attributes.get('name');
  if (name === undefined) return { kind: 'broken', at: invoke.end };
  // Values are read once the call is whole.
  const parameters: Parameter[] = [];
  let pos = skipSpace(text, invoke.end, text.length);
  while (tokenAt(text, pos, tags.parameterOpen)) {
    const tag = readTagAttributes(text, pos + lengthOf(tags.parameterOpen));
    if (tag.kind === 'broken') return tag;
    const key = tag.attributes.get('name');
    const valueEnd = key === undefined ? -1 : valueEnds(tag.end);
    if (key === undefined || valueEnd < 0) return { kind: 'broken', at: tag.end };
    if (withArguments) parameters.push({ key, text: tag.attributes.get('string') === 'true', from: tag.end, to: valueEnd });
    pos = skipSpace(text, tokenAt(text, valueEnd, tags.parameterClose) ? valueEnd + lengthOf(tags.parameterClose) : valueEnd, text.length);
  }
  if (!tokenAt(text, pos, tags.invokeClose)) return { kind: 'broken', at: pos };
  const kinds = withArguments && parameters.length > 0 ? textParameters?.(name) : undefined;
  const values: JsonObject = new Map();
  for (const parameter of withArguments ? parameters : []) {
    const raw = text.slice(parameter.from, parameter.to);
    values.set(parameter.key, parameter.text ? raw : kinds === undefined ? parameterValue(raw) : readParameter(raw, kinds.get(parameter.key)));
  }
  return { kind: 'call', call: callFromParts(name, values), end: pos + lengthOf(tags.invokeClose) };
}
