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

/**
 * Redis Cluster's slot of `key` (CRC16 of its hash tag, mod 16384), by ioredis's own slot function
 * (cluster-key-slot, which ships no types).
 */
export const keySlot = require('cluster-key-slot') as (key: string) => number;
