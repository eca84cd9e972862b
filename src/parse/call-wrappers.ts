import { isWhitespace } from './char-classes';

/**
 * Tokens other models' templates put around calls that a dialect here reads (their JSON, or
 * Qwen3-Coder XML): an opening token and its closing one, if any. IBM Granite 3's `<|tool_call|>`,
 * Microsoft Phi-4-mini's `functools`, AI21 Jamba's and Tencent Hunyuan's `<tool_calls>`,
 * ByteDance Seed-OSS's `<seed:tool_call>`, InternLM's `<|action_start|><|plugin|>`, Meituan
 * LongCat's `<longcat_tool_call>`, Cohere Command A's `<|START_ACTION|>`.
 */
const WRAPPERS: readonly { readonly open: string; readonly close?: string }[] = [
  { open: '<|tool_call|>' },
  { open: 'functools' },
  { open: '<tool_calls>', close: '</tool_calls>' },
  { open: '<seed:tool_call>', close: '</seed:tool_call>' },
  { open: '<|action_start|><|plugin|>', close: '<|action_end|>' },
  { open: '<longcat_tool_call>', close: '</longcat_tool_call>' },
  { open: '<|START_ACTION|>', close: '<|END_ACTION|>' },
];

/** Where a span of returned calls, widened, starts and ends, and the wrapper left open after it. */
export interface WidenedSpan {
  readonly start: number;
  readonly end: number;
  readonly open: string | undefined;
}

/**
 * The span of returned calls widened to the wrapper tokens right around it (whitespace between),
 * so that `remaining_text` does not keep an empty `<tool_calls></tool_calls>`: an opening token
 * that ends at `start`, no lower than `floor`, and its closing token that begins at `end`, no
 * further than `ceiling`. A closing token is taken only when the span is inside its wrapper: the
 * span took the opening token, or the span before, whose widening ended at `floor` with `open`
 * (the wrapper it left open), is separated from it by whitespace only. So with calls of one
 * wrapper in several spans (Seed-OSS's `<function=...>` each), the first takes the opening and
 * the last the closing.
 */
export function widenToWrappers(text: string, start: number, end: number, floor: number, ceiling: number, open: string | undefined): WidenedSpan {
  let before = start;
  while (before > floor && isWhitespace(text.charCodeAt(before - 1))) before--;
  let after = end;
  while (after < ceiling && isWhitespace(text.charCodeAt(after))) after++;
  let widenedStart = start;
  let inside = before === floor ? open : undefined;
  for (const wrapper of WRAPPERS) {
    if (before - wrapper.open.length >= floor && text.startsWith(wrapper.open, before - wrapper.open.length)) {
      widenedStart = before - wrapper.open.length;
      inside = wrapper.open;
    }
  }
  const close = WRAPPERS.find((wrapper) => wrapper.open === inside)?.close;
  if (close === undefined) return { start: widenedStart, end, open: undefined };
  if (after + close.length <= ceiling && text.startsWith(close, after)) return { start: widenedStart, end: after + close.length, open: undefined };
  return { start: widenedStart, end, open: inside };
}
