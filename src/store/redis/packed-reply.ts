/** A reply of session-lib.lua's packed_reply, read. */
export interface PackedReply {
  readonly numbers: number[];
  /** The state after the integers ('' when none). */
  readonly state: string;
  /** Everything after the state, commas and all ('' when none). */
  readonly text: string;
}

/**
 * Reads a reply of session-lib.lua's packed_reply: `count` integers joined by ',', then maybe a
 * state and a text of any characters. The attempt's scripts answer one text instead of an array
 * because ioredis decodes each element of an array reply at a cost (a bound function per integer,
 * its decoder's fields kept in WeakMaps): one bulk string is decoded once and split here.
 */
export function unpackReply(reply: string, count: number): PackedReply {
  const numbers = new Array<number>(count);
  let from = 0;
  for (let i = 0; i < count; i++) {
    let to = reply.indexOf(',', from);
    if (to === -1) to = reply.length;
    numbers[i] = Number(reply.slice(from, to));
    from = to + 1;
  }
  if (from >= reply.length) return { numbers, state: '', text: '' };
  const cut = reply.indexOf(',', from);
  return cut === -1 ? { numbers, state: reply.slice(from), text: '' } : { numbers, state: reply.slice(from, cut), text: reply.slice(cut + 1) };
}
