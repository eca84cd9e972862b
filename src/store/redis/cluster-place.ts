import { Cluster } from 'ioredis';
import type { RedisClient } from './connect';

/** Where a key is written on a Redis Cluster: its slot, and the node serving that slot now (`host:port`), when known. */
export interface ClusterPlace {
  readonly slot: number;
  readonly node?: string;
}

/**
 * The place of an item's key (`keyOf`) on `client`, for a Cluster client only (undefined for one
 * Redis): the pending writes hold back only the records of a slot or node whose write failed, not
 * those behind them on healthy nodes (see PendingWritesOptions.placeOf).
 */
export function clusterPlaces<T>(client: RedisClient, keyOf: (item: T) => string): ((item: T) => ClusterPlace) | undefined {
  if (!(client instanceof Cluster)) return undefined;
  return (item) => {
    const slot = keySlot(keyOf(item));
    return { slot, node: client.slots[slot]?.[0] };
  };
}

/** Redis Cluster's slot of `key`: CRC16 (XMODEM) of its hash tag (the key when it has none), mod 16384. */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  const close = open === -1 ? -1 : key.indexOf('}', open + 1);
  const hashed = Buffer.from(close > open + 1 ? key.slice(open + 1, close) : key);
  let crc = 0;
  for (const byte of hashed) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}
