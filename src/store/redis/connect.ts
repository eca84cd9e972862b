import { Cluster, Redis, type Callback, type RedisOptions } from 'ioredis';
import type { Logger } from '../../log';
import { warnRefusedCommands } from './acl-probe';
import { connectionState, watchConnection } from './connection-watch';
import { dropDeadSockets } from './dead-sockets';
import { dropConnections } from './end-client';
import { safeConnectorDisconnect } from './connector-disconnect';
import { closeFailoverDetector } from './failover-detector';
import { RedisConfigError, type ConfigContext } from './misconfiguration';
import { parseRedisUrlWithSources, type RedisTarget } from './redis-url';
import { redisTlsOptions } from './redis-tls';
import { checkInteger } from '../../options';

/** A connection to standalone Redis (directly or through Sentinel) or to a Redis Cluster. */
export type RedisClient = Redis | Cluster;

/** How a Redis connection behaves while Redis is away. */
export interface RedisConnectOptions {
  /** Time one command may take before it fails, in ms. @default 1000 (Limits.storeTimeoutMs) */
  readonly commandTimeoutMs?: number;
  /** Longest wait between reconnection attempts, in ms. @default 1000 */
  readonly maxReconnectDelayMs?: number;
  /**
   * Queue commands while disconnected instead of failing them at once. Only the pub/sub
   * connection does this: store steps must fail fast so no call waits on a dead store.
   * @default false
   */
  readonly queueWhileDown?: boolean;
  /**
   * On a Cluster, how often the slots are read again, so that a failover no command ran into is
   * learnt (connections used directly, as an ordered publisher's, never trigger a refresh). @default 5000
   */
  readonly slotsRefreshMs?: number;
  /**
   * A connection with commands waiting this long without a byte from Redis is dropped and made
   * again (see dropDeadSockets): a half-open connection would otherwise last ~15 minutes.
   * @default the larger of 3000 and 3 × commandTimeoutMs
   */
  readonly deadSocketMs?: number;
  /** The key prefix of the store on this client (RedisStoreOptions.prefix), whose keys the ACL probe tries and whose ACL a refusal names. @default "dispatch" */
  readonly prefix?: string;
  /**
   * What the connection is for (`store`, `events-subscriber`): its Redis client name is
   * `dispatch:<name>` (CLIENT LIST), and its log lines say `connection: <name>`, so that an
   * operator can tell which of a replica's connections failed. @default "redis"
   */
  readonly name?: string;
  readonly logger?: Logger;
  readonly env?: NodeJS.ProcessEnv;
}

/** ioredis's options for TLS to the Sentinels and to the master and replicas they name, all with `tls`. */
const sentinelTls = (tls: RedisOptions['tls']) => ({ enableTLSForSentinelMode: true, tls, sentinelTLS: tls });

/** Opens a connection: `subscriber` for a pub/sub subscription's (createWatchedSubscriber's), else a publisher's or a client's. */
export type RedisConnector = (purpose?: 'subscriber') => RedisClient;

/** A connector to `url` naming its connections `name`, a subscription's `<name>-subscriber` (RedisConnectOptions.name). */
export function namedConnector(url: string, name: string, options: Omit<RedisConnectOptions, 'name'> = {}): RedisConnector {
  return (purpose) => connectRedis(url, { ...options, name: purpose === 'subscriber' ? `${name}-subscriber` : name });
}

/** Wait before a command answered TRYAGAIN (its slot moving between Cluster nodes) is sent again, in ms. */
const TRY_AGAIN_MS = 100;

/**
 * Connects to the Redis a URL names (see parseRedisUrl). Commands fail at once while the
 * connection is down and after `commandTimeoutMs` when Redis does not answer; the client keeps
 * reconnecting in the background, so the store recovers by itself when Redis returns, and drops
 * a connection that stopped answering (half-open) after `deadSocketMs`. A configuration Redis
 * refuses (a password, the database number) is logged naming what to fix, and makes whenReady
 * reject; a connection whose SELECT failed is dropped and made again, never used on database 0.
 */
export function connectRedis(url: string | RedisTarget, options: RedisConnectOptions = {}): RedisClient {
  safeConnectorDisconnect();
  const name = options.name ?? 'redis';
  const ctx: ConfigContext = { ...(typeof url === 'string' ? parseRedisUrlWithSources(url, options.env) : { target: url }), prefix: options.prefix, name };
  const { target } = ctx;
  const env = options.env ?? process.env;
  const deadSocketMs = checkInteger('redis: deadSocketMs', options.deadSocketMs ?? Math.max(3_000, 3 * (options.commandTimeoutMs ?? 1000)), {}, String);
  const maxDelay = options.maxReconnectDelayMs ?? 1000;
  const queue = options.queueWhileDown ?? false;
  const retryStrategy = (times: number) => Math.min(50 * 2 ** Math.min(times - 1, 10), maxDelay);
  const node = {
    username: target.username,
    password: target.password,
    commandTimeout: queue ? undefined : options.commandTimeoutMs ?? 1000,
    connectTimeout: Math.max(2000, options.commandTimeoutMs ?? 1000),
    maxRetriesPerRequest: queue ? null : 0,
    autoResendUnfulfilledCommands: queue,
    connectionName: `dispatch:${name}`,
  } satisfies RedisOptions;
  const common: RedisOptions = { ...node, enableOfflineQueue: queue, retryStrategy };
  let client: RedisClient;
  switch (target.mode) {
    case 'standalone':
      client = new Redis({ ...common, host: target.address.host, port: target.address.port, db: target.db, tls: target.tls ? redisTlsOptions(env, target.address.host) : undefined });
      break;
    case 'sentinel':
      client = new Redis({
        ...common,
        sentinels: target.sentinels.map((a) => ({ ...a })),
        name: target.name,
        // The Sentinels' own credentials: `password` above is the master's alone, and a Sentinel
        // with requirepass refuses every other command unauthenticated.
        sentinelUsername: target.sentinelUsername,
        sentinelPassword: target.sentinelPassword,
        sentinelRetryStrategy: retryStrategy,
        // A sentinel that takes the connection but never answers (stopped, hung) would otherwise
        // hold the master lookup for ever, the other sentinels unasked.
        sentinelCommandTimeout: options.commandTimeoutMs ?? 1000,
        // Sentinel names the new master (+switch-master) seconds before it demotes the old one (a
        // planned failover: ~10 s): the client must leave it then, or what it writes there
        // meanwhile (claims, records) is erased when it resyncs as a replica. The detector's
        // subscriptions to the Sentinels reconnect as the master's connection does, not each minute.
        failoverDetector: true,
        sentinelReconnectStrategy: retryStrategy,
        // TLS to the Sentinels, and to the master and replicas they name (each checked against
        // the address the Sentinel gave: a Sentinel names an IP address unless it announces hostnames).
        ...(target.tls ? sentinelTls(redisTlsOptions(env)) : {}),
      });
      closeFailoverDetector(client);
      break;
    case 'cluster':
      client = new Cluster(target.nodes.map((a) => ({ ...a })), {
        redisOptions: target.tls ? { ...node, tls: redisTlsOptions(env) } : node,
        // Over TLS, a node's certificate names its host: ioredis would connect to the address it
        // resolved instead and check the certificate against that (ioredis's advice for TLS
        // clusters, such as ElastiCache's). Nodes the cluster announces by IP address are checked so.
        ...(target.tls ? { dnsLookup: (address: string, callback: (error: null, address: string) => void) => callback(null, address) } : {}),
        enableOfflineQueue: queue,
        clusterRetryStrategy: retryStrategy,
        retryDelayOnClusterDown: 100,
        retryDelayOnFailover: 100,
        // While a slot moves between nodes (a reshard), a script whose keys are not all on one node
        // (split, or some not created yet: every new call's claim) is answered TRYAGAIN there for
        // the whole move, and sent again every retryDelayOnTryAgain. Counting 16 redirections (2-3
        // per retry), ioredis gave up after ~0.6 s: here it retries until the command times out.
        // A TRYAGAIN, ASK or MOVED reply means the command did not run, so none runs twice.
        retryDelayOnTryAgain: TRY_AGAIN_MS,
        maxRedirections: Math.max(16, 3 * Math.ceil((node.commandTimeout ?? 0) / TRY_AGAIN_MS) + 4),
        slotsRefreshInterval: options.slotsRefreshMs ?? 5_000,
      });
      catchAskingReplies(client);
      break;
  }
  watchConnection(client, ctx, options.logger, options.prefix);
  if (options.logger) warnRefusedCommands(client, ctx, options.logger);
  dropDeadSockets(client, deadSocketMs);
  return client;
}

/**
 * On an -ASK redirect (a slot being moved to another node), ioredis sends ASKING to the importing
 * node before the command and drops ASKING's own promise: a node that does not answer it within
 * the command timeout, or whose connection drops, rejects it unhandled, which ends the process.
 * Each node's ASKING gets a handler here; the command sent after it still fails for its caller.
 * (Pipelines send their ASKING as a queued command, whose failure the pipeline already handles.)
 */
function catchAskingReplies(cluster: Cluster): void {
  cluster.on('+node', (node: Redis) => {
    const asking = node.asking.bind(node);
    // The arguments as given: an explicit `undefined` would be sent to Redis as an argument.
    node.asking = (...args: [callback?: Callback<'OK'>]) => {
      const reply = asking(...args);
      reply.catch(() => undefined);
      return reply;
    };
  });
}

/** A node's `host:port`, as a Cluster client's connections name the node they go to. */
export const nodeAddress = (node: Redis) => `${node.options.host ?? ''}:${String(node.options.port)}`;

/**
 * Resolves true once the client is ready and its user's ACL lets dispatch work (see aclProbe),
 * false after `timeoutMs` (it keeps trying): Redis away may come back. Rejects with
 * RedisConfigError, and ends the client, as soon as Redis refuses its configuration (a password,
 * the database number, the ACL): that waiting will not cure, so start-up stops there with what to
 * fix. From then on the ACL is asked again at each ready, a refusal logged (warnMisconfigured).
 */
export function whenReady(client: RedisClient, timeoutMs: number): Promise<boolean> {
  const state = connectionState(client);
  const refused = (problem: string) => {
    // Every connection, a socket being made too: disconnect() only ended that one once it
    // connected, with a 'connect' after the rejection (seen once in CI).
    dropConnections(client);
    return new RedisConfigError(problem);
  };
  if (state?.problem !== undefined) return Promise.reject(refused(state.problem));
  // The probe of this ready (watchConnection's listener ran first and started it), or a first one.
  const probed = () => (state ? state.probe ?? state.runProbe() : Promise.resolve(undefined));
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      client.off('ready', onReady);
      state?.waiters.delete(onProblem);
    };
    const onReady = () =>
      void probed().then((problem) => {
        // A problem reached onProblem already.
        if (problem !== undefined) return;
        done();
        resolve(true);
      });
    const onProblem = (problem: string) => {
      done();
      reject(refused(problem));
    };
    const timer = setTimeout(() => {
      done();
      resolve(false);
    }, timeoutMs);
    state?.waiters.add(onProblem);
    if (client.status === 'ready') onReady();
    else client.on('ready', onReady);
  });
}

/**
 * Subscribers of `channel` anywhere in a Cluster (undefined while no node is known): a PUBLISH
 * there counts only the subscribers on the node that took it. Every node is asked, replicas too:
 * a Cluster client subscribes through any node.
 */
export async function clusterSubscribers(client: Cluster, channel: string): Promise<number | undefined> {
  const nodes = client.nodes('all');
  if (nodes.length === 0) return undefined;
  const counts = await Promise.all(nodes.map((node) => node.pubsub('NUMSUB', channel) as Promise<[string, number | string]>));
  return counts.reduce((sum, [, n]) => sum + Number(n), 0);
}
