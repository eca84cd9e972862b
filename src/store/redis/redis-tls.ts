import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { rootCertificates, type ConnectionOptions } from 'node:tls';

/**
 * The variables naming the PEM files of a TLS connection to Redis (rediss://, rediss-sentinel://,
 * rediss-cluster://): a CA to trust beside Node's own (a private CA's Redis), and the client's
 * certificate and key for a Redis that asks for one (`tls-auth-clients yes`, Redis's default).
 */
export const REDIS_TLS_VARIABLES = { ca: 'DISPATCH_REDIS_TLS_CA', cert: 'DISPATCH_REDIS_TLS_CERT', key: 'DISPATCH_REDIS_TLS_KEY' } as const;

/** The files the DISPATCH_REDIS_TLS_* variables of `env` name (an empty one is unset). */
export function redisTlsFiles(env: NodeJS.ProcessEnv): { readonly ca?: string; readonly cert?: string; readonly key?: string } {
  const files: { ca?: string; cert?: string; key?: string } = {};
  for (const [part, variable] of Object.entries(REDIS_TLS_VARIABLES) as [keyof typeof REDIS_TLS_VARIABLES, string][]) {
    if (env[variable]) files[part] = env[variable];
  }
  return files;
}

/**
 * Why the DISPATCH_REDIS_TLS_* variables of `env` cannot be used with a URL that asks for TLS
 * (`tls`) or not, else undefined: a certificate without its key (or the reverse), or files for a
 * URL that connects in plain TCP (they would be ignored: the connection the operator meant to
 * secure would not be).
 */
export function redisTlsProblem(tls: boolean, env: NodeJS.ProcessEnv): string | undefined {
  const files = redisTlsFiles(env);
  const set = Object.keys(files).map((part) => REDIS_TLS_VARIABLES[part as keyof typeof REDIS_TLS_VARIABLES]);
  if (!tls && set.length > 0) return `${set.join(' and ')} ${set.length > 1 ? 'are' : 'is'} set, but the URL does not ask for TLS (use rediss://, rediss-sentinel:// or rediss-cluster://)`;
  if ((files.cert === undefined) !== (files.key === undefined)) return `${REDIS_TLS_VARIABLES.cert} and ${REDIS_TLS_VARIABLES.key} go together (the client's certificate and its key)`;
  return undefined;
}

/**
 * The TLS options of a connection to Redis at `host`: the files of DISPATCH_REDIS_TLS_*, read now
 * (a connection made later, after a reconnection, reads them again: a renewed certificate is used),
 * and the server name to check the certificate against, unless `host` is an IP address (no SNI
 * for one, RFC 6066: Node warned of it, DEP0123, at every connection; the certificate is then
 * checked against its IP addresses). Throws, naming the variable, a file it cannot read.
 */
export function redisTlsOptions(env: NodeJS.ProcessEnv, host?: string): ConnectionOptions {
  const options: { ca?: (string | Buffer)[]; cert?: Buffer; key?: Buffer; servername?: string } = {};
  const files = redisTlsFiles(env);
  const read = (part: keyof typeof REDIS_TLS_VARIABLES): Buffer | undefined => {
    const file = files[part];
    if (file === undefined) return undefined;
    try {
      return readFileSync(file);
    } catch (error) {
      throw new Error(`${REDIS_TLS_VARIABLES[part]}: cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
    }
  };
  const ca = read('ca');
  // Beside Node's own CAs, not instead of them: a managed Redis's public certificate stays trusted.
  if (ca) options.ca = [...rootCertificates, ca];
  const cert = read('cert');
  if (cert) options.cert = cert;
  const key = read('key');
  if (key) options.key = key;
  if (host !== undefined && isIP(host) === 0) options.servername = host;
  return options;
}
