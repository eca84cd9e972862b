import { LEN, ProtoWriter } from '../wire/growing-writer';

// The bytes of the attribute keys, the span names and the attribute values that repeat from span
// to span (`rpc.system=grpc`, `dispatch.outcome=ok`, a tool's name), encoded once and copied after.
// Writing a string is a loop over its characters: in a loop of the encoder alone, over the three
// spans of a traced call, a third of the time went to the string loop and most of the rest to the
// tags and lengths around each attribute; most of those bytes are the same on every span.

/** Attribute keys whose bytes are kept; later keys are written each time. */
export const MAX_ENCODED_KEYS = 256;
/**
 * Values kept per key. A key that shows more distinct values than this (a session id, a call id)
 * keeps its key bytes only: its values are written each time, and no longer looked up.
 */
export const MAX_ENCODED_VALUES = 32;
/** Longest string value (and span name) whose bytes are kept. */
export const MAX_ENCODED_CHARS = 128;
/** Span names whose bytes are kept. */
export const MAX_ENCODED_NAMES = 2048;

/** A key's bytes, and its whole KeyValue messages by value while it has few. */
interface KeyEntry {
  /** KeyValue field 1 (the key) and the tag of field 2 (the value). */
  readonly prefix: Uint8Array;
  /** The KeyValue message (without tag and length) by value; undefined once it had too many. */
  values: Map<string | number | boolean, Uint8Array> | undefined;
}

const scratch = new ProtoWriter(1024);

/** A value whose KeyValue may be kept: a primitive, a string not too long. */
const keepable = (value: unknown): value is string | number | boolean =>
  typeof value === 'number' || typeof value === 'boolean' || (typeof value === 'string' && value.length <= MAX_ENCODED_CHARS);

/**
 * Encoded KeyValue messages and strings, kept by value (bounded: {@link MAX_ENCODED_KEYS} keys of
 * {@link MAX_ENCODED_VALUES} values, {@link MAX_ENCODED_NAMES} names). The bytes are what the
 * encoder would write, so a span encodes the same whether its attributes were kept or not.
 */
export class EncodedAttributes {
  private readonly keys = new Map<string, KeyEntry>();
  private readonly names = new Map<string, Uint8Array>();

  /** `writeValue` writes an AnyValue's fields (the encoder's own). */
  constructor(private readonly writeValue: (w: ProtoWriter, value: unknown) => void) {}

  /**
   * Writes one KeyValue's length and message (its tag written by the caller) from kept bytes;
   * false when `key` is not kept and nothing was written.
   */
  writeKeyValue(w: ProtoWriter, key: string, value: unknown): boolean {
    let entry = this.keys.get(key);
    if (entry === undefined) {
      if (this.keys.size >= MAX_ENCODED_KEYS) return false;
      entry = { prefix: encodePrefix(key), values: new Map() };
      this.keys.set(key, entry);
    }
    const values = entry.values;
    if (values !== undefined && keepable(value)) {
      let message = values.get(value);
      if (message === undefined) {
        if (values.size < MAX_ENCODED_VALUES) values.set(value, (message = this.encodeKeyValue(entry.prefix, value)));
        else entry.values = undefined;
      }
      if (message !== undefined) {
        w.bytes(message);
        return true;
      }
    }
    const kv = w.start();
    w.raw(entry.prefix);
    const any = w.start();
    this.writeValue(w, value);
    w.finish(any);
    w.finish(kv);
    return true;
  }

  /** Writes a string with its length, as ProtoWriter.string does, from kept bytes when it repeats. */
  writeName(w: ProtoWriter, name: string): void {
    let bytes = this.names.get(name);
    if (bytes === undefined) {
      if (this.names.size >= MAX_ENCODED_NAMES || name.length > MAX_ENCODED_CHARS) return w.string(name);
      scratch.pos = 0;
      scratch.string(name);
      this.names.set(name, (bytes = scratch.copy()));
    }
    w.raw(bytes);
  }

  private encodeKeyValue(prefix: Uint8Array, value: unknown): Uint8Array {
    scratch.pos = 0;
    scratch.raw(prefix);
    const any = scratch.start();
    this.writeValue(scratch, value);
    scratch.finish(any);
    return scratch.copy();
  }
}

function encodePrefix(key: string): Uint8Array {
  scratch.pos = 0;
  scratch.tag(1, LEN);
  scratch.string(key);
  scratch.tag(2, LEN);
  return scratch.copy();
}
