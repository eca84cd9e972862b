/** A host and port of a Redis server, sentinel or cluster node. */
export interface RedisAddress {
  readonly host: string;
  readonly port: number;
}

/** Where the Redis store connects, parsed from a URL. */
export type RedisTarget =
  | { readonly mode: 'standalone'; readonly address: RedisAddress; readonly db: number; readonly tls: boolean; readonly username?: string; readonly password?: string }
  | { readonly mode: 'sentinel'; readonly sentinels: readonly RedisAddress[]; readonly name: string; readonly username?: string; readonly password?: string }
  | { readonly mode: 'cluster'; readonly nodes: readonly RedisAddress[]; readonly username?: string; readonly password?: string };

const SCHEMES: Readonly<Record<string, { mode: RedisTarget['mode']; port: number; tls: boolean }>> = {
  redis: { mode: 'standalone', port: 6379, tls: false },
  rediss: { mode: 'standalone', port: 6379, tls: true },
  'redis-sentinel': { mode: 'sentinel', port: 26379, tls: false },
  'redis-cluster': { mode: 'cluster', port: 6379, tls: false },
};

const FORMS = 'redis://[:password@]host:port/db, rediss://..., redis-sentinel://[:password@]host:26379,host:26379/MASTER or redis-cluster://[:password@]host:6379,host:6379';

function fail(url: string, problem: string): never {
  throw new Error(`bad Redis URL ${JSON.stringify(url.replace(/\/\/[^@/]*@/, '//***@'))}: ${problem} (expected ${FORMS})`);
}

function parseAddress(url: string, text: string, defaultPort: number): RedisAddress {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s]+)(?::(\d{1,5}))?$/.exec(text);
  if (!match) fail(url, `${JSON.stringify(text)} is not host or host:port`);
  const port = match[2] === undefined ? defaultPort : Number(match[2]);
  if (port < 1 || port > 65535) fail(url, `port ${port} is out of range`);
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
}

/**
 * Parses a Redis URL: `redis://[:pw@]host:port/db`, `rediss://` (TLS),
 * `redis-sentinel://[:pw@]h1:26379,h2:26379/MASTER` or `redis-cluster://[:pw@]h1:6379,h2:6379`.
 * A password absent from the URL comes from DISPATCH_REDIS_PASSWORD.
 */
export function parseRedisUrl(url: string, env: NodeJS.ProcessEnv = process.env): RedisTarget {
  const match = /^([a-z-]+):\/\/(?:([^@/]*)@)?([^/?#]*)(?:\/([^?#]*))?$/.exec(url.trim());
  if (!match) fail(url, 'not a URL');
  const scheme = SCHEMES[match[1]!];
  if (!scheme) fail(url, `unknown scheme "${match[1]}:"`);
  let username: string | undefined;
  let password: string | undefined;
  if (match[2] !== undefined) {
    const colon = match[2].indexOf(':');
    username = decodeURIComponent(colon < 0 ? match[2] : match[2].slice(0, colon)) || undefined;
    password = colon < 0 ? undefined : decodeURIComponent(match[2].slice(colon + 1)) || undefined;
  }
  password ??= env.DISPATCH_REDIS_PASSWORD || undefined;
  const hosts = match[3]!.split(',').filter((h) => h !== '');
  if (hosts.length === 0) fail(url, 'no host');
  const addresses = hosts.map((h) => parseAddress(url, h, scheme.port));
  const path = match[4] ?? '';
  const auth = { ...(username === undefined ? {} : { username }), ...(password === undefined ? {} : { password }) };
  switch (scheme.mode) {
    case 'standalone': {
      if (addresses.length > 1) fail(url, 'a standalone URL names one host (use redis-sentinel:// or redis-cluster:// for several)');
      if (path !== '' && !/^\d{1,5}$/.test(path)) fail(url, `database ${JSON.stringify(path)} is not a number`);
      return { mode: 'standalone', address: addresses[0]!, db: path === '' ? 0 : Number(path), tls: scheme.tls, ...auth };
    }
    case 'sentinel':
      if (path === '') fail(url, 'the master name is missing (redis-sentinel://host:26379/MASTER)');
      return { mode: 'sentinel', sentinels: addresses, name: decodeURIComponent(path), ...auth };
    case 'cluster':
      if (path !== '') fail(url, 'a cluster URL has no path (a cluster has only database 0)');
      return { mode: 'cluster', nodes: addresses, ...auth };
  }
}
