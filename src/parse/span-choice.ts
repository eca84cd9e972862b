import type { FoundCalls } from './found-calls';
import type { DroppedCalls } from './parse-warnings';

/** A span to return calls from, with whether its text stays in the remaining text. */
export interface ChosenSpan extends FoundCalls {
  /** Set when only some of the span's calls are returned: the rest must not vanish unseen. */
  readonly keepText: boolean;
}

interface Head {
  readonly rest: Iterator<FoundCalls>;
  next: FoundCalls | undefined;
}

/**
 * The spans of calls to return from what several detectors found, reading their spans together
 * in text order. A span that begins inside an earlier one (or at the same place as a longer one)
 * is passed over, whichever detector found either: its text is quoted in that call's arguments
 * (a `<tool_call>` tag in the string of a `[TOOL_CALLS]` call). Of the others, those with calls
 * naming offered tools (any, when `offered` is empty) are kept, only those calls, up to
 * `maxCalls`: the span that reaches the limit is cut to fit, and later spans are left alone. A
 * call cut off before its arguments is never kept, nor one with `unnamedArguments`, nor one that `requiresOffer` unless named. A span of which only some calls are kept
 * (others name tools not offered, are cut off, or come past `maxCalls`) keeps its text, so the
 * caller can see what was not returned. Detectors are read
 * lazily, no further than that.
 */
export function chooseSpans(
  sources: readonly Iterable<FoundCalls>[],
  offered: ReadonlySet<string>,
  maxCalls: number,
  dropped?: DroppedCalls,
): ChosenSpan[] {
  const heads: Head[] = sources.map((spans) => {
    const rest = spans[Symbol.iterator]();
    return { rest, next: rest.next().value };
  });
  const accepted: ChosenSpan[] = [];
  let count = 0;
  let end = 0;
  while (count < maxCalls) {
    const head = earliest(heads);
    const span = head?.next;
    if (head === undefined || span === undefined) break;
    head.next = head.rest.next().value;
    if (span.start < end) continue;
    // Even a span with no offered call quotes what lies inside it.
    end = span.end;
    const calls = span.calls.filter((call) => call.cutOff !== true && call.unnamedArguments !== true && isOffered(call.name, span, offered));
    if (calls.length === 0) {
      dropped?.seen(span, calls);
      continue;
    }
    const kept = calls.slice(0, maxCalls - count);
    dropped?.seen(span, calls);
    if (kept.length < calls.length) dropped?.pastTheLimit();
    // A cut-off call after the span's end leaves its own text in the remaining text already.
    accepted.push({ ...span, calls: kept, keepText: kept.length < span.calls.filter((call) => call.beyondSpan !== true).length });
    count += kept.length;
  }
  // A span waiting after the limit: its calls are left too (how many is not read).
  if (count >= maxCalls && earliest(heads)?.next !== undefined) dropped?.pastTheLimit();
  return accepted;
}

/** The head whose next span begins first (the longer of two at the same place), if any is left. */
function earliest(heads: readonly Head[]): Head | undefined {
  let found: Head | undefined;
  for (const head of heads) {
    const span = head.next;
    if (span === undefined) continue;
    const best = found?.next;
    if (best === undefined || span.start < best.start || (span.start === best.start && span.end > best.end)) found = head;
  }
  return found;
}

/** Whether `name` is an offered tool: any, when none are listed, except in a span that `requiresOffer`. */
function isOffered(name: string, span: FoundCalls, offered: ReadonlySet<string>): boolean {
  return offered.size === 0 ? span.requiresOffer !== true : offered.has(name);
}
