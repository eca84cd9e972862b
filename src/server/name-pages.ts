import { fieldSize } from '../wire/sized-writer';
import { invalidArgument } from './grpc-adapter';

/**
 * Room kept below `max_response_bytes` for what a page's entries do not count: the response's
 * framing and its next_page_token (a tool name is at most 128 characters, its token ~180 bytes).
 */
export const PAGE_SLACK_BYTES = 1024;
/** The longest page_token taken: a token of a 128-character name is 176 characters. */
const MAX_TOKEN_CHARS = 1024;
const TOKEN_PREFIX = 'n:';

/** The page_token that asks for the names after `lastName` (opaque to clients: base64url). */
export const pageToken = (lastName: string): string => Buffer.from(TOKEN_PREFIX + lastName).toString('base64url');

/**
 * The last name of the previous page, from its token; '' for the first page. A token this service
 * could not have given (not base64url, or not of a name) is INVALID_ARGUMENT naming page_token.
 */
export function pageAfter(token: string): string {
  if (token === '') return '';
  const bad = () => invalidArgument('page_token', 'page_token is not one this service gave (the next_page_token of a previous answer); leave it empty for the first page');
  if (token.length > MAX_TOKEN_CHARS) throw bad();
  const decoded = Buffer.from(token, 'base64url');
  const text = decoded.toString();
  if (decoded.toString('base64url') !== token || !text.startsWith(TOKEN_PREFIX) || text.length === TOKEN_PREFIX.length || Buffer.byteLength(text) !== decoded.length) throw bad();
  return text.slice(TOKEN_PREFIX.length);
}

/** An entry as it goes into a page: its message and its encoded size in bytes. */
export interface PageEntry<T> {
  readonly value: T;
  readonly bytes: number;
}

/** How a page is filled. */
export interface PageFill<T> {
  /** The most entries; 0: as many as fit. */
  readonly pageSize: number;
  /** The previous page's next_page_token ('' for the first page). */
  readonly pageToken: string;
  /** limits.max_response_bytes: the page's entries take at most this less PAGE_SLACK_BYTES. */
  readonly maxBytes: number;
  /** The entry of a name. */
  readonly entry: (name: string) => PageEntry<T>;
  /**
   * An entry that does not fit in `room` bytes even alone on its page: a smaller one of at most
   * `room` bytes, or a note (counted in the page) saying why it was left out.
   * @default left out, no note
   */
  readonly alone?: (name: string, room: number) => PageEntry<T> | { readonly note: string };
}

/** A page: its entries, the notes of entries left out, and the token of the next page ('' when last). */
export interface Page<T> {
  readonly values: T[];
  readonly notes: string[];
  readonly nextPageToken: string;
}

/**
 * A page of `names` (Google AIP-158): those after the token's in byte order, at most `pageSize`,
 * and as many as fit in max_response_bytes, each counted with its field's tag and length. A page
 * holds at least one name when any is left (the first, made smaller by `alone` when it does not
 * fit), so paging always ends. The token is the last name the page covers: names added or removed
 * between pages are seen or not by where they sort, and none is listed twice.
 */
export function namePage<T>(names: Iterable<string>, fill: PageFill<T>): Page<T> {
  const after = pageAfter(fill.pageToken);
  const sorted = [...names].filter((name) => name > after).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const most = fill.pageSize === 0 ? Infinity : fill.pageSize;
  const room = fill.maxBytes - PAGE_SLACK_BYTES;
  const values: T[] = [];
  const notes: string[] = [];
  let used = 0;
  let covered = 0;
  for (const name of sorted) {
    if (values.length === most) break;
    let entry: PageEntry<T> | { readonly note: string } = fill.entry(name);
    if (used + fieldSize(entry.bytes) > room) {
      if (values.length > 0 || used > 0) break;
      // Its own tag and length take at most 6 bytes.
      entry = fill.alone?.(name, Math.max(0, room - 6)) ?? { note: '' };
    }
    if ('note' in entry) {
      if (entry.note !== '') {
        if (used + fieldSize(Buffer.byteLength(entry.note)) > room && covered > 0) break;
        notes.push(entry.note);
        used += fieldSize(Buffer.byteLength(entry.note));
      }
    } else {
      values.push(entry.value);
      used += fieldSize(entry.bytes);
    }
    covered++;
  }
  return { values, notes, nextPageToken: covered < sorted.length ? pageToken(sorted[covered - 1]!) : '' };
}
