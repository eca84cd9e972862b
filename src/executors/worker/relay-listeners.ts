import { Cluster } from 'ioredis';
import type { AssignmentRequest } from './worker-pool';

/** What the relay asks before and after publishing an assignment, of whether a replica listens (see createListenerChecks). */
export interface ListenerChecks {
  /**
   * Whether `replica` may have heard an assignment whose PUBLISH reached no one. Not on a
   * standalone Redis, which counts every subscriber. On a Cluster the count covers the subscribers
   * on the node that took it only, and a replica subscribes through any node: a side-effecting
   * call counts as delivered (its reply is awaited until the deadline: running it twice is what
   * must not happen); a read-only one is tried elsewhere when no node this replica knows has a
   * subscriber (a node it does not know of yet could still have one).
   */
  mayHaveHeard(replica: string, request: AssignmentRequest): Promise<boolean>;
  /**
   * On a Cluster, whether a side-effecting assignment may be sent to `replica`: false when no node
   * has a subscriber on its channel. A replica that died (SIGKILL, a lost node) leaves its routes
   * for up to `routeTtlMs`; an assignment published to it could not be told from one delivered,
   * so it was awaited until the deadline and ended OUTCOME_UNKNOWN though it never ran. Asked
   * before sending, the answer is safe either way: a replica passed over was sent nothing (one
   * caught moving its subscription is passed over once, as is one subscribed through a node this
   * replica does not know yet). Asked for every such call (one PUBSUB NUMSUB per node, in
   * parallel): a remembered "listening" would send the calls of the next moments to a replica that
   * just died. A count that fails or takes longer than `subscriberCountTimeoutMs` lets the
   * assignment go (and be awaited), as before.
   */
  mayBeSent(replica: string, request: AssignmentRequest): Promise<boolean>;
}

/**
 * The checks for the relay's connection `redis`, `count` giving the subscribers on a replica's
 * channel (PUBSUB NUMSUB on every node of a Cluster, in parallel; undefined when the count fails
 * or takes longer than `subscriberCountTimeoutMs`: a replica not known to be gone may be listening).
 */
export function createListenerChecks(redis: object, count: (replica: string) => Promise<number | undefined>): ListenerChecks {
  const cluster = redis instanceof Cluster;
  const mayBeListening = async (replica: string) => (await count(replica)) !== 0;
  return {
    mayHaveHeard(replica, request) {
      if (!cluster) return Promise.resolve(false);
      return request.readOnly ? mayBeListening(replica) : Promise.resolve(true);
    },
    mayBeSent: (replica, request) => (request.readOnly || !cluster ? Promise.resolve(true) : mayBeListening(replica)),
  };
}
