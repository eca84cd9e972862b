/**
 * Text encoded in base64 and wrapped at a fixed width, as GitHub's contents API returns a file
 * (`"encoding": "base64"`, 60 characters a line), `base64` prints one (76) or a tool wraps it at
 * 64: every line of it is a random-looking run, so the entropy step redacted 83% of a README's
 * lines and the agent decoded garbage. Such a text is decoded and redacted as the text it holds:
 * kept whole when that holds no secret, re-encoded at its width with the secrets' markers when it
 * does (a `.env` committed to a repository: the agent decodes the file with `[REDACTED:...]` in
 * it, where before fragments of its values got through between the redacted lines). Bytes that are
 * not UTF-8 text (an image, a keystore) are left to the entropy step, as before.
 */

/** The widths base64 is commonly wrapped at: GitHub's contents API, PEM's, MIME's and `base64`'s. */
const WIDTHS = [60, 64, 76] as const;

/** A text of whole lines of `width` base64 characters and a last line of at most `width`, with or without a final line break. */
const WRAPPED = new Map(WIDTHS.map((width) => [width, new RegExp(String.raw`^(?:[A-Za-z0-9+/]{${width}}\n)+[A-Za-z0-9+/]{0,${width}}={0,2}\n?$`)]));

/** Decoded text with control characters other than tab and line breaks is taken for binary. */
const BINARY = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The width `text` is wrapped at and the text it decodes to, when it is wrapped base64 of UTF-8 text; else undefined. */
export function wrappedBase64(text: string): { readonly width: number; readonly decoded: string } | undefined {
  // A loop, not find(): no closure per text redacted.
  let width: (typeof WIDTHS)[number] | undefined;
  for (const w of WIDTHS) {
    if (text.charCodeAt(w) === 10) {
      width = w;
      break;
    }
  }
  if (width === undefined || !WRAPPED.get(width)!.test(text)) return undefined;
  let decoded: string;
  try {
    decoded = UTF8.decode(Buffer.from(text, 'base64'));
  } catch {
    return undefined;
  }
  return BINARY.test(decoded) ? undefined : { width, decoded };
}

/** `decoded` encoded in base64 again, wrapped at `width`, ending with a line break when `like` does. */
export function rewrapped(decoded: string, width: number, like: string): string {
  const encoded = Buffer.from(decoded, 'utf8').toString('base64');
  const lines: string[] = [];
  for (let at = 0; at < encoded.length; at += width) lines.push(encoded.slice(at, at + width));
  return lines.join('\n') + (like.endsWith('\n') ? '\n' : '');
}

const isBase64Char = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47;

/**
 * Whether `text` (JSON text) may hold wrapped base64 in a string: a line break escaped (`\n`)
 * after 60 base64 characters. The JSON pass, which decodes the string and finds it
 * ({@link wrappedBase64}), runs only on a text the text pass changed or that may hide something
 * from it: a base64-encoded private key in JSON whose lines the entropy step happened to pass
 * over (a slash too many, no digit) went out whole. Each escape looks back at most 60 characters,
 * and only to the one before it: linear.
 */
export function hidesWrappedBase64(text: string): boolean {
  for (let at = text.indexOf('\\n', WIDTHS[0]); at >= 0; at = text.indexOf('\\n', at + 2)) {
    let run = 0;
    for (let i = at - 1; i >= 0 && run < WIDTHS[0] && isBase64Char(text.charCodeAt(i)); i--) run++;
    if (run >= WIDTHS[0]) return true;
  }
  return false;
}
