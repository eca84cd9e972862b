/** Time scrapes take of one turn of the event loop, all of them together, in milliseconds. */
export const SLICE_MS = 5;

let sliceStart = performance.now();
let nextTurn: Promise<void> | undefined;

/**
 * Returns at once while this turn's slice lasts, else waits for the next turn of the event loop.
 * The slice is shared by every rendering and every answer being sent: each taking SLICE_MS of
 * its own, four answers and a rendering made every turn ~25 ms, and a call that needs a few turns
 * was late by as many times that.
 */
export function pauseScrapes(): Promise<void> | undefined {
  if (performance.now() - sliceStart < SLICE_MS) return undefined;
  nextTurn ??= new Promise((resolve) =>
    setImmediate(() => {
      nextTurn = undefined;
      sliceStart = performance.now();
      resolve();
    }),
  );
  return nextTurn;
}

/**
 * Bytes of one chunk. Each text is encoded into the chunk as it is added, so no string outlives
 * its line: appended to a string first, the lines made ropes that lived through young-generation
 * collections and that `Buffer.from` flattened in one run.
 */
export const CHUNK_BYTES = 64 * 1024;

/**
 * Text written in slices of SLICE_MS, yielding to the event loop between them, and kept as chunks
 * of bytes encoded as it is added: no step (appending, encoding, sending) handles the whole text
 * at once. At the label cap a scrape is ~10 MB; a `Buffer.concat` of it, or a `Buffer.from` of a
 * slice's text, stalled every call 100-280 ms at once.
 */
export class SlicedText {
  private readonly parts: Buffer[] = [];
  private chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  private used = 0;

  add(text: string): void {
    // A UTF-16 unit takes at most 3 bytes in UTF-8.
    if (this.used + text.length * 3 > CHUNK_BYTES) {
      this.seal();
      if (text.length * 3 > CHUNK_BYTES) {
        this.parts.push(Buffer.from(text));
        return;
      }
    }
    this.used += this.chunk.write(text, this.used);
  }

  /** Lets the event loop run when this turn's slice is over (pauseScrapes). */
  async pause(): Promise<void> {
    await pauseScrapes();
  }

  /** Adds `line(item)` for each of `items`, pausing between them. */
  async each<T>(items: Iterable<T>, line: (item: T) => string): Promise<void> {
    for (const item of items) {
      this.add(line(item));
      await this.pause();
    }
  }

  /** The bytes written so far, in chunks of at most CHUNK_BYTES (or one text longer than that). */
  chunks(): readonly Buffer[] {
    this.seal();
    return this.parts;
  }

  private seal(): void {
    if (this.used === 0) return;
    this.parts.push(this.chunk.subarray(0, this.used));
    this.chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    this.used = 0;
  }
}
