import type { FoundCalls } from './found-calls';
import { createTokenFinder, tokenBefore, type Spellings } from './special-tokens';
import { jsonArgumentsReader, readTaggedRegion, spanEnd } from './tagged-region';
import type { WorkBudget } from './tolerant-json';

/** What a call's header (between its opening token and its arguments) names. */
export interface CallHeader {
  readonly name: string;
  /** The model's own id for the call, if it wrote one. */
  readonly id?: string;
  /** Where the JSON arguments begin. */
  readonly argumentsFrom: number;
}

/**
 * A dialect that writes its calls in a section of special tokens:
 * `SECTION_BEGIN CALL_BEGIN header arguments CALL_END ... SECTION_END` (DeepSeek, Kimi K2).
 */
export interface SectionedDialect {
  readonly format: Extract<FoundCalls['format'], 'deepseek' | 'kimi'>;
  readonly sectionBegin: Spellings;
  readonly sectionEnd: Spellings;
  readonly callBegin: Spellings;
  readonly callEnd: Spellings;
  /** The header of the call whose opening token ends at `from`, read no further than `limit`; undefined when it is none. */
  readonly readHeader: (text: string, from: number, limit: number) => CallHeader | undefined;
}

/**
 * The calls of a sectioned dialect, one span each (the first with the section's opening token,
 * the last with its closing one), so a call not returned keeps its own text. Arguments are one
 * JSON object, read as after any opening tag (see `readTaggedRegion`): the next call's opening
 * token may be quoted in them, a brace dropped before the call's closing token is supplied, and a
 * call cut off, or whose header is broken, is no call and its text stays.
 */
export function* detectSectioned(text: string, budget: WorkBudget, dialect: SectionedDialect): Generator<FoundCalls> {
  const begins = createTokenFinder(text, dialect.callBegin);
  const ends = createTokenFinder(text, dialect.callEnd);
  const beginLength = dialect.callBegin[0]?.length ?? 0;
  let previousEnd = 0;
  for (let begin = begins.next(0); begin >= 0; ) {
    const from = begin + beginLength;
    const next = begins.next(from);
    const regionEnd = next < 0 ? text.length : next;
    const header = dialect.readHeader(text, from, regionEnd);
    if (header === undefined) {
      begin = next;
      continue;
    }
    const region = { from: header.argumentsFrom, regionEnd, closeAt: ends.next(header.argumentsFrom), mayQuoteNext: next >= 0 };
    const read = readTaggedRegion(text, region, budget, jsonArgumentsReader(text, header.name, header.id));
    if (read === undefined) {
      begin = next;
      continue;
    }
    const limit = read.end > regionEnd ? read.end : regionEnd;
    const end = spanEnd(text, spanEnd(text, read.end, limit, dialect.callEnd), limit, dialect.sectionEnd);
    yield { start: tokenBefore(text, begin, previousEnd, dialect.sectionBegin), end, calls: read.calls, format: dialect.format };
    previousEnd = end;
    begin = begins.next(end);
  }
}
