import { checkInteger } from '../options';

/**
 * A bounded FIFO that drops its oldest item when full and counts what was lost before each item:
 * the items it dropped, and the losses reported elsewhere ({@link RingBuffer.addLost}) before the
 * item was pushed.
 */
export interface RingBuffer<T> {
  readonly size: number;
  readonly capacity: number;
  /** The weights of the items held (0 without a weight bound). */
  readonly weight: number;
  /**
   * Adds an item, dropping the oldest when full, or while the weights held and `weight` would pass
   * the weight bound (the newest item is kept whatever its weight); the losses reported since the
   * last push go with it.
   */
  push(item: T, weight?: number): void;
  /** Takes the oldest item, or undefined when empty. */
  shift(): T | undefined;
  /**
   * Items lost before the item last shifted and not yet taken (dropped here, or reported lost
   * before it was pushed), then resets the count.
   */
  takeDropped(): number;
  /**
   * Counts `count` items lost before they reached the buffer (elsewhere): they came after the
   * items already held, so they are counted before the next item pushed, not the oldest held.
   */
  addLost(count: number): void;
  clear(): void;
}

/**
 * Creates a ring buffer holding at most `capacity` items and, with `maxWeight`, items of at most
 * that much weight together (the newest one whatever its weight).
 */
export function createRingBuffer<T>(capacity: number, maxWeight?: number): RingBuffer<T> {
  checkInteger('ring buffer capacity', capacity, {}, String);
  if (maxWeight !== undefined) checkInteger('ring buffer weight bound', maxWeight, {}, String);
  const items: (T | undefined)[] = [];
  const weights: number[] | undefined = maxWeight === undefined ? undefined : [];
  // Losses reported before each held item was pushed (0 for most; created on the first loss).
  let lostBefore: number[] | undefined;
  let head = 0;
  let size = 0;
  let weight = 0;
  let dropped = 0;
  let lostSincePush = 0;
  /** The oldest item goes, and the losses counted before it go to the next one delivered. */
  const dropOldest = () => {
    dropped += 1 + (lostBefore?.[head] ?? 0);
    items[head] = undefined;
    if (weights) weight -= weights[head]!;
    head = (head + 1) % capacity;
    size--;
  };
  return {
    get size() {
      return size;
    },
    get weight() {
      return weight;
    },
    capacity,
    push(item, itemWeight = 0) {
      if (size === capacity) dropOldest();
      if (weights) {
        while (size > 0 && weight + itemWeight > maxWeight!) dropOldest();
        weights[(head + size) % capacity] = itemWeight;
        weight += itemWeight;
      }
      const slot = (head + size) % capacity;
      size++;
      items[slot] = item;
      if (lostSincePush > 0 || lostBefore !== undefined) (lostBefore ??= new Array<number>(capacity).fill(0))[slot] = lostSincePush;
      lostSincePush = 0;
    },
    shift() {
      if (size === 0) return undefined;
      const item = items[head];
      items[head] = undefined;
      if (weights) weight -= weights[head]!;
      if (lostBefore !== undefined) {
        dropped += lostBefore[head]!;
        lostBefore[head] = 0;
      }
      head = (head + 1) % capacity;
      size--;
      return item;
    },
    takeDropped() {
      const count = dropped;
      dropped = 0;
      return count;
    },
    addLost(count) {
      lostSincePush += count;
    },
    clear() {
      items.length = 0;
      lostBefore = undefined;
      head = 0;
      size = 0;
      weight = 0;
    },
  };
}
