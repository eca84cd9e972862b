/** A bounded FIFO that drops its oldest item when full and counts what it dropped. */
export interface RingBuffer<T> {
  readonly size: number;
  readonly capacity: number;
  /** Adds an item, dropping the oldest when full. */
  push(item: T): void;
  /** Takes the oldest item, or undefined when empty. */
  shift(): T | undefined;
  /** Items dropped since the last call, then resets the count. */
  takeDropped(): number;
  /** Counts `count` items lost before they reached the buffer (elsewhere), as if dropped here. */
  addDropped(count: number): void;
  clear(): void;
}

/** Creates a ring buffer holding at most `capacity` items. */
export function createRingBuffer<T>(capacity: number): RingBuffer<T> {
  if (!Number.isInteger(capacity) || capacity <= 0) throw new RangeError(`ring buffer capacity must be a positive integer, got ${capacity}`);
  const items: (T | undefined)[] = [];
  let head = 0;
  let size = 0;
  let dropped = 0;
  return {
    get size() {
      return size;
    },
    capacity,
    push(item) {
      if (size === capacity) {
        items[head] = item;
        head = (head + 1) % capacity;
        dropped++;
        return;
      }
      items[(head + size) % capacity] = item;
      size++;
    },
    shift() {
      if (size === 0) return undefined;
      const item = items[head];
      items[head] = undefined;
      head = (head + 1) % capacity;
      size--;
      return item;
    },
    takeDropped() {
      const count = dropped;
      dropped = 0;
      return count;
    },
    addDropped(count) {
      dropped += count;
    },
    clear() {
      items.length = 0;
      head = 0;
      size = 0;
    },
  };
}
