import type { Response } from 'undici';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../errors';

/** A 2xx answer's whole body, refused (UNEXPECTED, after) past `maxBytes`. */
export async function readCapped(response: Response, maxBytes: number): Promise<string> {
  if (!response.body) return '';
  const decoder = new TextDecoder();
  let size = 0;
  let text = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      await response.body.cancel().catch(() => undefined);
      throw new DispatchError(ErrorKind.UNEXPECTED, `the tool's answer exceeded ${maxBytes} bytes`, { phase: 'after' });
    }
    text += decoder.decode(chunk, { stream: true });
  }
  return text + decoder.decode();
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
  const decoder = new TextDecoder();
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
