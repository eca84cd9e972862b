import { Cluster } from 'ioredis';
import { answerWithin } from '../../pipeline/answer-within';
import type { RedisClient } from './connect';

/**
 * Ends a client's connections at once, half-open ones too: a stalled or cut-off peer would never
 * answer the FIN that `disconnect` sends, and nothing else is to come on them.
 */
export function dropConnections(client: RedisClient): void {
  const nodes = client instanceof Cluster ? client.nodes('all') : [client];
  client.disconnect();
  for (const node of nodes) node.stream?.destroy();
}

/**
 * Closes `client` with QUIT, so that Redis forgets it (its subscriptions, its name) before this
 * resolves; when Redis has not answered within `ms`, drops its connections instead (see
 * {@link dropConnections}). A client that queues commands while Redis is away, with no command
 * timeout, would otherwise hold QUIT, and its caller's close, until Redis answers: a stalled
 * server never does. Resolves either way; never rejects.
 */
export async function closeWithin(client: RedisClient, ms: number): Promise<void> {
  const answered = await answerWithin(client.quit().then(() => true, () => true), ms);
  if (answered === undefined) dropConnections(client);
}
