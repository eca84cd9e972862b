import { skipSpace } from './marker-finder';

/**
 * End-of-turn tokens a server may leave in the text (it kept special tokens): Llama 3's
 * `<|eot_id|>` and `<|eom_id|>`, Llama 4's `<|eot|>`, ChatML's `<|im_end|>`, Gemma's
 * `<end_of_turn>` and `<eos>`, `</s>`, Cohere's, and the usual others. Not gpt-oss's `<|end|>`,
 * `<|return|>` or `<|call|>` (harmony's remaining text keeps its messages' tokens), nor DeepSeek's
 * `<｜end▁of▁sentence｜>`, which its remaining text has kept since it was read (test/parse/deepseek.test.ts).
 */
const END_TOKENS = [
  '<|eot_id|>', '<|eom_id|>', '<|eot|>', '<|eom|>', '<|end_of_text|>', '<|endoftext|>', '<|im_end|>', '<end_of_turn>', '<eos>', '</s>',
  '<|END_OF_TURN_TOKEN|>',
];

/** Past the end-of-turn tokens (and spaces) from `pos`: the text's end when only they are left, else `pos`. */
export function endOfTurn(text: string, pos: number): number {
  for (let at = pos; ; ) {
    if (at >= text.length) return at;
    const token = END_TOKENS.find((t) => text.startsWith(t, at));
    if (token === undefined) return pos;
    at = skipSpace(text, at + token.length, text.length);
  }
}

/**
 * `remaining` (trimmed) less the end-of-turn tokens it ends in: a token the server kept after the
 * calls is no text for the user (`<tool_call>...</tool_call><|im_end|>` left `<|im_end|>`).
 */
export function withoutEndTokens(remaining: string): string {
  let end = remaining.length;
  for (let token = tokenEndingAt(remaining, end); token !== undefined; token = tokenEndingAt(remaining, end)) {
    end -= token.length;
    while (end > 0 && remaining.charCodeAt(end - 1) <= 0x20) end--;
  }
  return end === remaining.length ? remaining : remaining.slice(0, end).trimEnd();
}

function tokenEndingAt(text: string, end: number): string | undefined {
  return END_TOKENS.find((token) => end >= token.length && text.startsWith(token, end - token.length));
}
