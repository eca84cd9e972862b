import { firstUnsafeChar, isUnsafeChar } from '../events/terminal-text';
import { codePointLength } from '../pipeline/bound-result';

/**
 * The one rule for an id a client or a model chooses (a call's id, `session_id`, `approval_id`,
 * `hello.worker_id`, a session filter) and for a tenant name: at most a bound of characters,
 * counted as code points (an emoji is one), and no control character nor invisible or reordering
 * format character (terminal-text's set, by Unicode property: \p{Cc}, \p{Cf}, \p{Zl}, \p{Zp} and
 * default-ignorables: NUL, ESC, CR, LF, DEL, C1, bidirectional controls, zero-width, tags), except
 * the joiners real text needs ({@link JOINERS}) and the tags of the flags of England, Scotland and
 * Wales ({@link flagTagTaken}). Such ids reach logs, events, spans, Redis keys, workers and terminals
 * whole (shown, they stay escaped: terminalWord).
 */

/**
 * Format characters an id may hold between two other characters: ZWNJ U+200C (Persian `می‌خواهم`),
 * ZWJ U+200D (emoji sequences `👨‍👩‍👧`, `🏳️‍🌈`; Indic conjuncts `क्‍ष`) and the soft hyphen U+00AD
 * (`Zusammen\u00ADarbeit`). Not first, not last, and not next to another control or format
 * character (a run of them hides nothing real text needs).
 */
const JOINERS = new Set(['\u200c', '\u200d', '\u00ad']);

/** The code point of `text` that ends just before UTF-16 `index` (a surrogate pair whole). */
function charBefore(text: string, index: number): string {
  const pair = index >= 2 && /[\ud800-\udbff][\udc00-\udfff]/.test(text.slice(index - 2, index));
  const start = pair ? index - 2 : index - 1;
  return String.fromCodePoint(text.codePointAt(start)!);
}

/** Whether the unsafe character at `index` is a joiner taken where it stands ({@link JOINERS}). */
function joinerTaken(text: string, index: number): boolean {
  const char = text[index]!;
  if (!JOINERS.has(char) || index === 0 || index === text.length - 1) return false;
  return !isUnsafeChar(charBefore(text, index)) && !isUnsafeChar(String.fromCodePoint(text.codePointAt(index + 1)!));
}

/**
 * What the tags of a subdivision flag may spell (UTS #51 emoji tag sequence, its tag_spec read as
 * ASCII): the three that Unicode recommends for general interchange (RGI), the flags of England,
 * Scotland and Wales, the only ones platforms draw. Any other text spelled in tags is refused, a
 * well-formed subdivision id too (`usca`): tag characters hide ASCII a reader never sees
 * (instructions smuggled to a model, a name that reads as another), and a chain of flags of any
 * subdivision id (up to seven tags each) hid ~190 of them in one id. These three spell nothing a
 * sender chooses.
 */
const RGI_SUBDIVISIONS: ReadonlySet<string> = new Set(['gbeng', 'gbsct', 'gbwls']);
/** The most tags a flag of RGI_SUBDIVISIONS holds. */
const MAX_FLAG_TAGS = 5;
/** U+1F3F4 WAVING BLACK FLAG, the base of every flag of tags (two UTF-16 units). */
const BLACK_FLAG = '\u{1F3F4}';
/** U+E007F CANCEL TAG, ending a tag sequence, by its low 7 bits. */
const CANCEL_TAG = 0x7f;

/** The tag character (U+E0000-E007F) at UTF-16 `index` of `text` as its low 7 bits (its ASCII twin), or -1. */
function tagAt(text: string, index: number): number {
  if (index < 0 || text.charCodeAt(index) !== 0xdb40) return -1;
  const low = text.charCodeAt(index + 1);
  return low >= 0xdc00 && low <= 0xdc7f ? low - 0xdc00 : -1;
}

/** Whether `tag` (a {@link tagAt} value) may spell a tag_spec: U+E0020-E007E. */
const specTag = (tag: number): boolean => tag >= 0x20 && tag < CANCEL_TAG;

/**
 * Whether the tag character at UTF-16 `index` belongs to a subdivision flag, taken where it
 * stands: U+1F3F4, then tags spelling one of {@link RGI_SUBDIVISIONS}, then U+E007F CANCEL TAG
 * (🏴 with `gbeng`, `gbsct`, `gbwls`: England, Scotland, Wales). A tag alone, after a letter or
 * another emoji, spelling anything else, or with no CANCEL TAG is refused. Reads at most
 * MAX_FLAG_TAGS + 1 tags either way.
 */
function flagTagTaken(text: string, index: number): boolean {
  if (tagAt(text, index) === -1) return false;
  let start = index;
  while (specTag(tagAt(text, start - 2))) if ((start -= 2) < index - 2 * MAX_FLAG_TAGS) return false;
  if (text.slice(start - 2, start) !== BLACK_FLAG) return false;
  let spec = '';
  let end = start;
  for (let tag = tagAt(text, end); specTag(tag) && spec.length <= MAX_FLAG_TAGS; tag = tagAt(text, (end += 2))) spec += String.fromCharCode(tag);
  return tagAt(text, end) === CANCEL_TAG && RGI_SUBDIVISIONS.has(spec);
}

/** Whether the unsafe character at `index` is taken where it stands: a joiner, a subdivision flag's tag. */
const takenInId = (text: string, index: number): boolean => joinerTaken(text, index) || flagTagTaken(text, index);

/** The longest id a client may choose, in code points. */
export const MAX_CLIENT_ID_CHARS = 256;

/** An id's length in code points; a surrogate scan only past `max` UTF-16 units (shorter ones cannot be over). */
export function idLength(id: string, max: number): number {
  return id.length > max ? codePointLength(id) : id.length;
}

/**
 * Why `id` breaks the rule, as the end of a sentence that starts with the id's name (`is 257
 * characters long, over the limit of 256`, `holds U+001B at position 3: a call id may not
 * hold ...`), or undefined. `noun` names the id in the second (`a call id`, `a session id`).
 */
export function idProblem(id: string, noun: string, max = MAX_CLIENT_ID_CHARS): string | undefined {
  const chars = idLength(id, max);
  if (chars > max) return `is ${chars} characters long, over the limit of ${max}`;
  const unsafe = firstUnsafeChar(id, takenInId);
  if (unsafe === undefined) return undefined;
  const code = `U+${unsafe.code.toString(16).toUpperCase().padStart(4, '0')}`;
  return `holds ${code} at position ${unsafe.position}: ${noun} may not hold control characters or invisible or bidirectional format characters`;
}

/**
 * Why `tenant` cannot name a tenant, as {@link idProblem} says it, or undefined: a tenant name
 * (a token's, a client certificate's) keeps the rule of client ids, since it reaches the same
 * logs, events, dispatchctl lines and Redis keys.
 */
export function tenantProblem(tenant: string): string | undefined {
  return idProblem(tenant, 'a tenant name');
}

/** The message refusing the id in request field `field`, or undefined when it keeps the rule: `session_id holds U+000A at position 2: ...`. */
export function clientIdRefusal(field: string, id: string, noun: string, max = MAX_CLIENT_ID_CHARS): string | undefined {
  const problem = idProblem(id, noun, max);
  return problem === undefined ? undefined : `${field} ${problem}`;
}
