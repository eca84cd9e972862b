import { Cluster, ReplyError, type Redis } from 'ioredis';
import type { Logger } from '../../log';
import { nodeAddress, type RedisClient } from './connect';

/** What one Redis server's settings put at risk, as log lines. */
export interface SettingsFinding {
  readonly level: 'warn' | 'info';
  readonly message: string;
  readonly fields: Record<string, string>;
}

/**
 * What `maxmemory-policy`, `appendonly` and `appendfsync` (CONFIG GET's reply, as pairs) put at
 * risk of the idempotency records (docs/redis.md, "Persistence"): an evicted record, or one lost
 * in a restart, lets a side-effecting call with its key run again.
 */
export function findingsOf(settings: ReadonlyMap<string, string>, node: string): SettingsFinding[] {
  const findings: SettingsFinding[] = [];
  const policy = settings.get('maxmemory-policy');
  if (policy !== undefined && policy !== 'noeviction') {
    findings.push({
      level: 'warn',
      message: 'redis evicts keys past maxmemory: an evicted idempotency record lets its side-effecting call run again; set maxmemory-policy noeviction',
      fields: { node, 'maxmemory-policy': policy },
    });
  }
  const appendonly = settings.get('appendonly');
  const fsync = settings.get('appendfsync');
  if (appendonly === 'no') {
    findings.push({ level: 'warn', message: 'redis keeps no append-only file: a restart forgets every idempotency record; set appendonly yes and appendfsync always', fields: { node, appendonly } });
  } else if (appendonly === 'yes' && fsync !== undefined && fsync !== 'always') {
    findings.push({
      level: 'warn',
      message: 'redis syncs its append-only file less than on every write: a crash can forget the last acknowledged idempotency records; set appendfsync always',
      fields: { node, appendfsync: fsync },
    });
  }
  return findings;
}

/**
 * The address of the server `node` is connected to: through Sentinel the master's, from the
 * socket (its options hold ioredis's defaults, localhost:6379); otherwise as nodeAddress names it.
 */
function serverAddress(node: Redis): string {
  const socket = node.options.sentinels?.length ? node.stream : undefined;
  return socket?.remoteAddress === undefined ? nodeAddress(node) : `${socket.remoteAddress}:${String(socket.remotePort)}`;
}

/**
 * The warning for a server that is a replica (`INFO replication`'s role), which takes no writes: a
 * URL naming a replica (not a master, nor Sentinel) served, every side-effecting call failing
 * STORE_UNAVAILABLE "takes no writes for now", which waiting never cures. Undefined for a master,
 * or when INFO is refused or does not answer (the ACL may leave it out).
 */
export async function replicaFinding(node: Redis, address: string): Promise<SettingsFinding | undefined> {
  const info = await node.info('replication').catch(() => '');
  if (!/^role:slave\r?$/m.test(info)) return undefined;
  const master = `${/^master_host:(\S+)/m.exec(info)?.[1] ?? '?'}:${/^master_port:(\d+)/m.exec(info)?.[1] ?? '?'}`;
  const message = 'redis is a read-only replica: every side-effecting call fails STORE_UNAVAILABLE until it is a master; point the URL at the master, or at Sentinel (redis-sentinel://) to follow failovers';
  return { level: 'warn', message, fields: { node: address, master } };
}

async function readSettings(node: Redis): Promise<Map<string, string>> {
  const reply = (await node.config('GET', 'maxmemory-policy', 'appendonly', 'appendfsync')) as unknown as string[];
  const settings = new Map<string, string>();
  for (let i = 0; i + 1 < reply.length; i += 2) settings.set(String(reply[i]), String(reply[i + 1]));
  return settings;
}

/**
 * Reads the settings that keep idempotency records (eviction, persistence) from every master the
 * client uses and logs what they put at risk: each time the client becomes ready (a Redis
 * restarted with other settings is noticed; through Sentinel, the master a failover promoted), and on a Cluster also for each master it has not
 * read yet when the slots are read again (a replica promoted by a failover). A finding is logged
 * once per node; a server that refuses CONFIG (a managed service, an ACL) is noted once at info; a
 * node that could not be asked (its connection failed) is asked again at the next chance.
 * Returns a function that stops.
 */
export function checkRedisSettings(client: RedisClient, logger: Logger): () => void {
  const logged = new Set<string>();
  const once = (key: string, log: () => void) => {
    if (logged.has(key)) return;
    logged.add(key);
    log();
  };
  // Masters read since the client last became ready, by address.
  const read = new Set<string>();
  const check = async () => {
    const nodes = client instanceof Cluster ? client.nodes('master') : [client];
    await Promise.all(
      nodes.map(async (node) => {
        const address = serverAddress(node);
        if (read.has(address)) return;
        read.add(address);
        const replica = await replicaFinding(node, address);
        if (replica) once(`${address}\u0000replica`, () => logger.warn(replica.message, replica.fields));
        try {
          for (const finding of findingsOf(await readSettings(node), address)) once(`${address}\u0000${finding.message}\u0000${JSON.stringify(finding.fields)}`, () => logger[finding.level](finding.message, finding.fields));
        } catch (error) {
          // Redis answered with an error: it refuses CONFIG. Anything else: ask again later.
          if (!(error instanceof ReplyError)) return void read.delete(address);
          once(`${address}\u0000refused`, () =>
            logger.info('could not read redis settings (CONFIG GET refused); make sure maxmemory-policy is noeviction and appendfsync always, or idempotency records can be lost', {
              node: address,
              error: (error as Error).message,
            }),
          );
        }
      }),
    );
  };
  const onReady = () => {
    read.clear();
    void check();
  };
  // Not while the Cluster is still connecting: commands sent to its nodes then keep it from becoming ready.
  const onRefresh = () => {
    if (client.status === 'ready') void check();
  };
  client.on('ready', onReady);
  if (client instanceof Cluster) client.on('refresh', onRefresh);
  if (client.status === 'ready') onReady();
  return () => {
    client.off('ready', onReady);
    client.off('refresh', onRefresh);
  };
}
