import { CHUNK_POINTS, chunksOf, indexChunks, pageOf, pageOfChunks, type TextPage } from '../spilled-text';
import type { ReadResultReply } from './scripts';

/** A spill as finish-attempt.lua takes it: its length in code points, the chunk size and its chunks. */
export interface SpillArguments {
  readonly totalChars: number;
  readonly chunkPoints: number;
  readonly chunks: readonly string[];
}

/** The arguments that write `text` as a spill in chunks (none for ''). */
export function spillArguments(text: string): SpillArguments {
  const index = indexChunks(text);
  return { totalChars: index.totalChars, chunkPoints: CHUNK_POINTS, chunks: chunksOf(text, index) };
}

/** The arguments of a finish step with no spill. */
export const NO_SPILL: SpillArguments = Object.freeze({ totalChars: 0, chunkPoints: CHUNK_POINTS, chunks: [] });

/**
 * The page [offset, offset + limit) of what read-result.lua answered for it: the chunks it spans,
 * or the whole text of a spill an older version wrote as one string.
 */
export function spillPage(reply: ReadResultReply, offset: number, limit: number): TextPage {
  if (reply[0] === 's') return pageOf(reply[1], indexChunks(reply[1]), offset, limit);
  const [, total, chunkPoints, first] = reply;
  const from = Math.min(Math.max(0, offset), Number(total));
  return pageOfChunks(reply.slice(4) as string[], Number(first), Number(chunkPoints), Number(total), from, limit);
}
