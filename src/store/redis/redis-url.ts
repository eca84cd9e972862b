import { redisTlsProblem } from './redis-tls';

/** A host and port of a Redis server, sentinel or cluster node. */
export interface RedisAddress {
  readonly host: string;
  readonly port: number;
}

/** Where the Redis store connects, parsed from a URL. */
export type RedisTarget =
  | { readonly mode: 'standalone'; readonly address: RedisAddress; readonly db: number; readonly tls: boolean; readonly username?: string; readonly password?: string }
  | {
      readonly mode: 'sentinel';
      readonly sentinels: readonly RedisAddress[];
      /** TLS to the Sentinels and to the master and replicas they name (rediss-sentinel://). */
      readonly tls: boolean;
      readonly name: string;
      /** The master's (and replicas') credentials. */
      readonly username?: string;
      readonly password?: string;
      /** The Sentinels' own credentials (their `requirepass` or ACL user), apart from the master's. */
      readonly sentinelUsername?: string;
      readonly sentinelPassword?: string;
    }
  /** `tls`: to every node (rediss-cluster://). */
  | { readonly mode: 'cluster'; readonly nodes: readonly RedisAddress[]; readonly tls: boolean; readonly username?: string; readonly password?: string };

/**
 * Where each credential of a URL came from, to name in an error Redis answers (misconfiguration):
 * the URL itself, or the variable. Absent: not given at all.
 */
export interface CredentialSources {
  readonly password?: 'url' | 'env';
  readonly sentinelPassword?: 'url' | 'env';
}

const SCHEMES: Readonly<Record<string, { mode: RedisTarget['mode']; port: number; tls: boolean }>> = {
  redis: { mode: 'standalone', port: 6379, tls: false },
  rediss: { mode: 'standalone', port: 6379, tls: true },
  'redis-sentinel': { mode: 'sentinel', port: 26379, tls: false },
  'rediss-sentinel': { mode: 'sentinel', port: 26379, tls: true },
  'redis-cluster': { mode: 'cluster', port: 6379, tls: false },
  'rediss-cluster': { mode: 'cluster', port: 6379, tls: true },
};

const FORMS = 'redis://[:password@]host:port/db, redis-sentinel://[:password@]host:26379,host:26379/MASTER or redis-cluster://[:password@]host:6379,host:6379; rediss://, rediss-sentinel:// and rediss-cluster:// over TLS';

/** Parameters a `redis-sentinel://` URL may carry: the Sentinels' credentials. */
const SENTINEL_PARAMS = ['sentinel_username', 'sentinel_password'] as const;

function fail(url: string, problem: string): never {
  // Up to the URL's last `@`: a password may hold an unencoded `/` or `@` (refused, but quoted).
  const hidden = url.replace(/\/\/.*@/s, '//***@').replace(/([?&]sentinel_password=)[^&#]*/g, '$1***');
  throw new Error(`bad Redis URL ${JSON.stringify(hidden)}: ${problem} (expected ${FORMS})`);
}

function parseAddress(url: string, text: string, defaultPort: number): RedisAddress {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s]+)(?::(\d{1,5}))?$/.exec(text);
  if (!match) fail(url, `${JSON.stringify(text)} is not host or host:port`);
  const port = match[2] === undefined ? defaultPort : Number(match[2]);
  if (port < 1 || port > 65535) fail(url, `port ${port} is out of range`);
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
}

/** `text` percent-decoded, or the URL refused with `problem` (a `%` not followed by two hex digits). */
function percentDecoded(url: string, text: string, problem: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return fail(url, problem);
  }
}

/**
 * The Sentinels' credentials from a sentinel URL's query (percent-encoded, as the userinfo; `+` is
 * a plus), else from DISPATCH_REDIS_SENTINEL_USERNAME and DISPATCH_REDIS_SENTINEL_PASSWORD.
 */
function sentinelAuth(url: string, query: string | undefined, env: NodeJS.ProcessEnv): { sentinelUsername?: string; sentinelPassword?: string; from?: 'url' | 'env' } {
  const given = new Map<string, string>();
  for (const part of (query ?? '').split('&').filter((p) => p !== '')) {
    const eq = part.indexOf('=');
    const key = eq < 0 ? part : part.slice(0, eq);
    if (!(SENTINEL_PARAMS as readonly string[]).includes(key)) fail(url, `unknown parameter "${key}" (a sentinel URL takes ${SENTINEL_PARAMS.join(' and ')})`);
    given.set(key, eq < 0 ? '' : percentDecoded(url, part.slice(eq + 1), `parameter "${key}" is not percent-encoded`));
  }
  const sentinelUsername = given.get('sentinel_username') || env.DISPATCH_REDIS_SENTINEL_USERNAME || undefined;
  const sentinelPassword = given.get('sentinel_password') || env.DISPATCH_REDIS_SENTINEL_PASSWORD || undefined;
  const from = given.get('sentinel_password') ? 'url' : sentinelPassword === undefined ? undefined : 'env';
  return { ...(sentinelUsername === undefined ? {} : { sentinelUsername }), ...(sentinelPassword === undefined ? {} : { sentinelPassword }), ...(from === undefined ? {} : { from }) };
}

/**
 * Parses a Redis URL: `redis://[:pw@]host:port/db`, `rediss://` (TLS),
 * `redis-sentinel://[:pw@]h1:26379,h2:26379/MASTER[?sentinel_username=U&sentinel_password=P]` or
 * `redis-cluster://[:pw@]h1:6379,h2:6379`, and `rediss-sentinel://`, `rediss-cluster://` over TLS
 * (its files from DISPATCH_REDIS_TLS_*, redis-tls.ts). A password absent from the URL comes from
 * DISPATCH_REDIS_PASSWORD; the Sentinels' own credentials, absent from the URL, from
 * DISPATCH_REDIS_SENTINEL_USERNAME and DISPATCH_REDIS_SENTINEL_PASSWORD (the master's password is
 * never sent to a Sentinel).
 */
export function parseRedisUrl(url: string, env: NodeJS.ProcessEnv = process.env): RedisTarget {
  return parseRedisUrlWithSources(url, env).target;
}

/** parseRedisUrl, and where the URL's credentials came from (see CredentialSources). */
export function parseRedisUrlWithSources(url: string, env: NodeJS.ProcessEnv = process.env): { target: RedisTarget; sources: CredentialSources } {
  const match = /^([a-z][a-z0-9+.-]*):\/\/(?:([^@/]*)@)?([^/?#]*)(?:\/([^?#]*))?(?:\?([^#]*))?$/i.exec(url.trim());
  if (!match) fail(url, 'not a URL');
  // A scheme is case-insensitive (RFC 3986: `REDIS://` is `redis://`), and only the four are
  // looked up: `constructor://` found Object's own and failed with a TypeError.
  const name = match[1]!.toLowerCase();
  const scheme = Object.hasOwn(SCHEMES, name) ? SCHEMES[name] : undefined;
  if (!scheme) fail(url, `unknown scheme "${match[1]}:"`);
  if (match[5] !== undefined && scheme.mode !== 'sentinel') fail(url, `only a redis-sentinel:// URL takes parameters (${SENTINEL_PARAMS.join(', ')})`);
  const tlsProblem = redisTlsProblem(scheme.tls, env);
  if (tlsProblem !== undefined) fail(url, tlsProblem);
  let username: string | undefined;
  let password: string | undefined;
  if (match[2] !== undefined) {
    const colon = match[2].indexOf(':');
    const decoded = (text: string) => percentDecoded(url, text, 'the user info is not percent-encoded (write % as %25, / as %2F, @ as %40)');
    username = decoded(colon < 0 ? match[2] : match[2].slice(0, colon)) || undefined;
    password = colon < 0 ? undefined : decoded(match[2].slice(colon + 1)) || undefined;
  }
  // A second `@` (the first ended the user info): the password held an unencoded one.
  if (match[3]!.includes('@') || (match[2] === undefined && match[4]?.includes('@'))) fail(url, 'the password holds an unencoded @ or / (write @ as %40, / as %2F)');
  const passwordFrom = password !== undefined ? 'url' : env.DISPATCH_REDIS_PASSWORD ? 'env' : undefined;
  password ??= env.DISPATCH_REDIS_PASSWORD || undefined;
  const sources: CredentialSources = passwordFrom === undefined ? {} : { password: passwordFrom };
  const hosts = match[3]!.split(',').filter((h) => h !== '');
  if (hosts.length === 0) fail(url, 'no host');
  const addresses = hosts.map((h) => parseAddress(url, h, scheme.port));
  const path = match[4] ?? '';
  const auth = { ...(username === undefined ? {} : { username }), ...(password === undefined ? {} : { password }) };
  switch (scheme.mode) {
    case 'standalone': {
      if (addresses.length > 1) fail(url, `a standalone URL names one host (use ${scheme.tls ? 'rediss-sentinel:// or rediss-cluster://' : 'redis-sentinel:// or redis-cluster://'} for several)`);
      if (path !== '' && !/^\d{1,5}$/.test(path)) fail(url, `database ${JSON.stringify(path)} is not a number`);
      return { target: { mode: 'standalone', address: addresses[0]!, db: path === '' ? 0 : Number(path), tls: scheme.tls, ...auth }, sources };
    }
    case 'sentinel': {
      if (path === '') fail(url, 'the master name is missing (redis-sentinel://host:26379/MASTER)');
      const { from, ...sentinel } = sentinelAuth(url, match[5], env);
      const name = percentDecoded(url, path, `the master name ${JSON.stringify(path)} is not percent-encoded (write % as %25)`);
      return { target: { mode: 'sentinel', sentinels: addresses, tls: scheme.tls, name, ...auth, ...sentinel }, sources: from === undefined ? sources : { ...sources, sentinelPassword: from } };
    }
    case 'cluster':
      if (path !== '') fail(url, 'a cluster URL has no path (a cluster has only database 0)');
      return { target: { mode: 'cluster', nodes: addresses, tls: scheme.tls, ...auth }, sources };
  }
}
