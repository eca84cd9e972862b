import type { Response } from 'undici';
import type { AnswerBudget } from './answer-budget';

/** The `charset` parameter of a Content-Type, quoted or not. */
const CHARSET = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i;

/** What decodes a body's bytes, chunk after chunk: TextDecoder's `decode`, as readCapped calls it. */
export interface BodyDecoder {
  decode(input?: Uint8Array, options?: { stream?: boolean }): string;
}

/** The byte order marks, and the encodings they name (WHATWG Encoding, "BOM sniff"). */
const BOMS = [
  { bytes: [0xef, 0xbb, 0xbf], label: 'utf-8' },
  { bytes: [0xfe, 0xff], label: 'utf-16be' },
  { bytes: [0xff, 0xfe], label: 'utf-16le' },
] as const;

const startsWith = (bytes: Uint8Array, prefix: readonly number[]) => prefix.every((b, i) => i >= bytes.length || bytes[i] === b);

/**
 * A decoder for a body's encoding: the one a byte order mark at its start names, which wins over
 * any label (as in browsers: Java's "UTF-16" is big-endian with a BOM under `charset=UTF-16`, a
 * label TextDecoder takes as little-endian); else the charset its Content-Type names, when
 * TextDecoder knows the label (`iso-8859-1`, `shift_jis`, `utf-16le`, ...); UTF-8 otherwise, and
 * when none is named. The BOM itself is left out of the text.
 */
export function decoderFor(response: Response): BodyDecoder {
  const match = CHARSET.exec(response.headers.get('content-type') ?? '');
  const label = match?.[1] ?? match?.[2];
  let decoder: TextDecoder | undefined;
  // The first bytes, held while they may still be the start of a BOM (one chunk may end within it).
  let head: Uint8Array = new Uint8Array(0);
  return {
    decode(input = new Uint8Array(0), options) {
      if (decoder) return decoder.decode(input, options);
      head = head.length === 0 ? input : Buffer.concat([head, input]);
      const bom = BOMS.find(({ bytes }) => startsWith(head, bytes));
      if (bom && head.length < bom.bytes.length && options?.stream) return '';
      decoder = bom && head.length >= bom.bytes.length ? new TextDecoder(bom.label) : labelled(label);
      const text = decoder.decode(head, options);
      head = new Uint8Array(0);
      return text;
    },
  };
}

/** A decoder for `label`, when TextDecoder knows it; UTF-8 otherwise. */
function labelled(label: string | undefined): TextDecoder {
  if (label) {
    try {
      return new TextDecoder(label);
    } catch {
      // A label TextDecoder does not know (RangeError): read it as UTF-8.
    }
  }
  return new TextDecoder();
}

/** A body that can be read in chunks and cancelled: undici's and the global fetch's `Response` alike. */
export interface CancellableBody {
  readonly body: { cancel(): Promise<void> } | null;
}

/** What bounds a tool's answer beyond its bytes (the HTTP executor's). */
export interface AnswerBounds {
  /**
   * Characters (UTF-16 units) kept at most: once the text is longer the body is cancelled and the
   * text returned as it is, longer than this, for the output cap to cut with its warning.
   */
  readonly maxChars: number;
  /** Each chunk's bytes are taken from it before decoding (waiting for room), all given back at the end. */
  readonly budget: AnswerBudget;
  /** Whose share of the budget the read takes: the calling tenant's (`default` without auth). */
  readonly tenant: string;
  /** Ends a wait for the budget (the call's deadline or cancel). */
  readonly signal: AbortSignal;
}

/**
 * A response's body as text, decoded with `decoder` across chunks, read until its end or until the
 * text passes `bounds.maxChars`; past `maxBytes` before that the body is cancelled and
 * `tooLarge()` is thrown (each caller names the failure in its own terms).
 */
export async function readCapped(response: CancellableBody, maxBytes: number, tooLarge: () => Error, decoder: BodyDecoder, bounds?: AnswerBounds): Promise<string> {
  if (!response.body) return '';
  const reader = bounds?.budget.open(bounds.tenant);
  let size = 0;
  let text = '';
  let ended = false;
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      if (reader && bounds) await reader.take(chunk.byteLength, bounds.signal);
      // The bytes up to the cap are decoded: they may carry the text past maxChars before it.
      const allowed = chunk.byteLength <= maxBytes - size ? chunk : chunk.subarray(0, maxBytes - size);
      size += allowed.byteLength;
      text += decoder.decode(allowed, { stream: true });
      if (bounds && text.length > bounds.maxChars) return text;
      if (allowed !== chunk) throw tooLarge();
    }
    ended = true;
    return text + decoder.decode();
  } finally {
    reader?.close();
    // Stops the download of a body not read to its end: undici closes its connection.
    if (!ended) await response.body.cancel().catch(() => undefined);
  }
}

/**
 * The start of an error answer's body, for its message: at most `maxBytes`, what arrives within
 * `waitMs`; the rest is never read (the body is cancelled, its connection closed). The status is
 * the answer: a body that drips, never ends or breaks off only shortens the excerpt, so a 429 stays
 * a 429 rather than becoming the tool's timeout, and a huge 404 stays a 404.
 */
export async function readExcerpt(response: Response, maxBytes: number, waitMs: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const decoder = decoderFor(response);
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, Math.max(0, waitMs), undefined)));
  let size = 0;
  let text = '';
  try {
    while (size < maxBytes) {
      const read = await Promise.race([reader.read(), waited]);
      if (read === undefined || read.done) break;
      const chunk = read.value.subarray(0, maxBytes - size);
      size += chunk.byteLength;
      // A character cut at the end is dropped (no final decode), not shown as U+FFFD.
      text += decoder.decode(chunk, { stream: true });
    }
  } catch {
    // Read what came; the status still says what happened.
  } finally {
    clearTimeout(timer);
    reader.cancel().catch(() => undefined);
  }
  return text;
}
