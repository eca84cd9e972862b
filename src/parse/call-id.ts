import { randomFillSync } from 'node:crypto';
import { idProblem, MAX_CLIENT_ID_CHARS } from './client-id';

const ALPHABET = Buffer.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789', 'latin1');
const ID_LENGTH = 24;
/** Bytes at or above this would make some characters likelier than others. */
const UNBIASED_LIMIT = 256 - (256 % ALPHABET.length);
/** Random bytes are drawn this many at a time; each is used once. */
const POOL_SIZE = 4096;

const pool = Buffer.alloc(POOL_SIZE);
let poolOffset = POOL_SIZE;

function randomByte(): number {
  if (poolOffset === POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++] ?? 0;
}

/** A fresh call id: `call_` and 24 alphanumerics from the system's secure random source. */
export function createCallId(): string {
  const chars = Buffer.alloc(ID_LENGTH);
  for (let filled = 0; filled < ID_LENGTH; ) {
    const byte = randomByte();
    if (byte < UNBIASED_LIMIT) chars[filled++] = ALPHABET[byte % ALPHABET.length] ?? 0x30;
  }
  return `call_${chars.toString('latin1')}`;
}

/** The longest call id, in code points (an emoji is one): what Dispatch takes, and ParseToolCalls passes on from a model. */
export const MAX_CALL_ID_CHARS = MAX_CLIENT_ID_CHARS;

/**
 * Why `id` cannot be a call's id, or undefined: the rule of every client-chosen id (client-id.ts):
 * longer than {@link MAX_CALL_ID_CHARS} code points, or holding a control character or an invisible
 * or reordering format character. A call id reaches events, spans,
 * logs, a worker's assignment and a terminal; the ids createCallId makes never fail it.
 */
export function callIdProblem(id: string): string | undefined {
  return idProblem(id, 'a call id', MAX_CALL_ID_CHARS);
}
