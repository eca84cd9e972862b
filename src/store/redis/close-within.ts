import { answerWithin } from '../../pipeline/answer-within';
import type { RedisClient } from './connect';
import { dropConnections, endUnconnected } from './end-client';

export { dropConnections };

/**
 * Closes `client` with QUIT, so that Redis forgets it (its subscriptions, its name) before this
 * resolves; when Redis has not answered within `ms`, drops its connections instead (see
 * {@link dropConnections}). A client that queues commands while Redis is away, with no command
 * timeout, would otherwise hold QUIT, and its caller's close, until Redis answers: a stalled
 * server never does. A client not connected (Redis away) is ended at once, without QUIT (see
 * {@link endUnconnected}). Resolves either way; never rejects.
 */
export async function closeWithin(client: RedisClient, ms: number): Promise<void> {
  await endUnconnected(client);
  if (client.status === 'end') return;
  const answered = await answerWithin(client.quit().then(() => true, () => true), ms);
  if (answered === undefined) dropConnections(client);
}
