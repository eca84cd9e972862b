import type { TextSpan } from './blank-spans';
import type { FoundCalls } from './found-calls';

/**
 * Languages of a Markdown fence whose content is code, not data: JSON in it is an argument of a
 * function call, a literal, an example (`client.call({"name": "send_email", ...})`), never the
 * model's own call. A fence without a language, or `json` (and its kin), may be one.
 */
const CODE_LANGUAGES: ReadonlySet<string> = new Set([
  'python', 'py', 'python3', 'ipython', 'javascript', 'js', 'mjs', 'cjs', 'jsx', 'typescript', 'ts', 'tsx', 'node',
  'bash', 'sh', 'shell', 'zsh', 'console', 'powershell', 'ps1', 'bat', 'cmd', 'go', 'golang', 'java', 'kotlin', 'kt',
  'scala', 'c', 'h', 'cpp', 'c++', 'cc', 'hpp', 'csharp', 'cs', 'c#', 'fsharp', 'ruby', 'rb', 'php', 'rust', 'rs',
  'swift', 'objc', 'dart', 'lua', 'perl', 'r', 'julia', 'elixir', 'erlang', 'haskell', 'clojure', 'sql', 'html',
  'css', 'vue', 'svelte', 'dockerfile', 'makefile', 'groovy', 'matlab', 'zig', 'nim',
  // Gemma 3's calls: read as pythonic calls (detect-tool-code.ts), never for JSON in their arguments.
  'tool_code',
]);

/** Whether a fence's info string (`python`, `ts title="x"`) names a programming language. */
export function isCodeFence(info: string): boolean {
  return CODE_LANGUAGES.has(info.split(/\s/, 1)[0]!.toLowerCase());
}

const FENCE = /(^|\n)[ \t]{0,3}(`{3,}|~{3,})([^\n`]*)\n/g;
/** Inline code: a run of one or two backticks, to the same run on the same line. */
const INLINE = /(`{1,2})(?!`)([^`\n]|`(?!\1))+?\1(?!`)/g;

/**
 * The calls of `spans` (the bare-JSON tier's) that do not lie inside code: a fenced block in a
 * programming language, or an inline code span. JSON quoted there is an example, a payload of code
 * or a format being explained (`` `{"name": "get_weather", ...}` ``, `payload = {...}` in a
 * python fence), which was taken for a call and run, and cut out of the text the user reads (a
 * probe ran `send_email` "I quit" from a python example). Spans are filtered, not the text blanked:
 * backticks inside a call's own strings are its arguments.
 */
export function* outsideCode(text: string, spans: Iterable<FoundCalls>): Generator<FoundCalls> {
  let regions: TextSpan[] | undefined;
  let next = 0;
  for (const span of spans) {
    regions ??= codeRegions(text);
    while (next < regions.length && regions[next]!.end <= span.start) next++;
    const region = regions[next];
    if (region !== undefined && region.start <= span.start && span.end <= region.end) continue;
    yield span;
  }
}

/** The code of `text`, in order: fenced blocks in a programming language, and inline code spans outside them. */
function codeRegions(text: string): TextSpan[] {
  if (!text.includes('`') && !text.includes('~~~')) return [];
  const spans: TextSpan[] = [];
  FENCE.lastIndex = 0;
  let searchedTo = 0;
  for (let open = FENCE.exec(text); open !== null; open = FENCE.exec(text)) {
    const start = open.index + open[1]!.length;
    const bodyStart = open.index + open[0].length;
    const closing = new RegExp(`\\n[ \\t]{0,3}${open[2]![0] === '`' ? '`' : '~'}{${open[2]!.length},}[ \\t]*(?=\\n|$)`, 'g');
    closing.lastIndex = bodyStart - 1;
    const close = closing.exec(text);
    const end = close === null ? text.length : close.index + close[0].length;
    if (isCodeFence(open[3]!.trim())) {
      inlineSpans(text, searchedTo, start, spans);
      spans.push({ start, end });
      searchedTo = end;
    }
    FENCE.lastIndex = end;
  }
  inlineSpans(text, searchedTo, text.length, spans);
  return spans;
}

/** The inline code spans of `text[from, to)`, added to `spans` in order. */
function inlineSpans(text: string, from: number, to: number, spans: TextSpan[]): void {
  if (from >= to) return;
  const part = text.slice(from, to);
  if (!part.includes('`')) return;
  INLINE.lastIndex = 0;
  for (let found = INLINE.exec(part); found !== null; found = INLINE.exec(part)) {
    // Fences are not inline code: three backticks never match (the run is one or two).
    spans.push({ start: from + found.index, end: from + found.index + found[0].length });
  }
}
