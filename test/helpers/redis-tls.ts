import { connectRedis, endUnconnected, whenReady, type RedisClient } from '../../src/store/redis';

/** The PEM files of a TLS redis-server (test/security/support/certificates.ts makes them). */
export interface RedisTls {
  readonly cert: string;
  readonly key: string;
  readonly ca: string;
  /** Whether the server asks clients for a certificate signed by `ca` (Redis's default). @default false */
  readonly authClients?: boolean;
}

/**
 * A test server's TLS port, beside its plain one (which the helpers' PING and redis-cli use):
 * 3,000 below it, so that with `tls-cluster` its cluster bus (+10,000) stays below Linux's
 * ephemeral range as the plain port's does (freeRedisPort). Taken already, the server exits at
 * start and is started again on other ports (spawnOnFreePort).
 */
export const tlsPortOf = (port: number): number => port - 3_000;

/** redis-server's arguments for TLS on tlsPortOf(`port`); `cluster`: the cluster bus and replication over TLS too. */
export function redisTlsArgs(port: number, tls: RedisTls, cluster = false): string[] {
  const args = ['--tls-port', String(tlsPortOf(port)), '--tls-cert-file', tls.cert, '--tls-key-file', tls.key, '--tls-ca-cert-file', tls.ca, '--tls-auth-clients', tls.authClients ? 'yes' : 'no'];
  return cluster ? [...args, '--tls-cluster', 'yes', '--tls-replication', 'yes'] : args;
}

/** The lines of a Sentinel's config file for TLS on tlsPortOf(`port`), reaching its master over TLS. */
export const sentinelTlsConf = (port: number, tls: RedisTls): string =>
  `tls-port ${tlsPortOf(port)}\ntls-cert-file ${tls.cert}\ntls-key-file ${tls.key}\ntls-ca-cert-file ${tls.ca}\ntls-auth-clients no\ntls-replication yes\n`;

/**
 * A test file's way to try reaching Redis: `reaches(url, env, ms)` connects with `env`'s
 * DISPATCH_REDIS_TLS_* files and resolves with the client once ready within `ms` (3 s by default),
 * else undefined. Every client it made is ended after each test, connected or not (a disconnect
 * alone leaves a never-connected socket a 2 s timer). Call it at the file's top level.
 */
export function redisReacher(): (url: string, env: NodeJS.ProcessEnv, ms?: number) => Promise<RedisClient | undefined> {
  const clients: RedisClient[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map(async (client) => (await endUnconnected(client), client.disconnect())));
  });
  return async (url, env, ms = 3_000) => {
    const client = connectRedis(url, { env });
    clients.push(client);
    return (await whenReady(client, ms)) ? client : undefined;
  };
}
