import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { caProblem, identityProblem } from '../auth/certificate-check';
import { isLocalTarget } from './loopback';
import { DEFAULT_TIMEOUT_SECONDS } from './dispatchctl-usage';
import { UsageError } from './usage';

export { DEFAULT_TIMEOUT_SECONDS, DEFAULT_TURN_TIMEOUT_SECONDS } from './dispatchctl-usage';

/** The longest --timeout: grpc-js times a deadline with a Node timer, which fires at once past 2^31 - 1 ms. */
export const MAX_TIMEOUT_SECONDS = 2_147_483;

/** dispatchctl's connection flags, as parseArgs gives them. */
export interface ConnectionFlags {
  readonly address?: string;
  readonly token?: string;
  readonly tls?: boolean;
  readonly 'tls-ca'?: string;
  readonly 'tls-cert'?: string;
  readonly 'tls-key'?: string;
  readonly 'allow-plaintext-token'?: boolean;
  readonly timeout?: string;
}

/** Where and how dispatchctl connects. */
export interface Connection {
  readonly address: string;
  readonly credentials: grpc.ChannelCredentials;
  /** Whether the credentials are TLS. */
  readonly tls: boolean;
  /** The bearer token, trimmed; undefined when none is given. */
  readonly token?: string;
  readonly deadlineMs: number;
}

/** gRPC target schemes passed as they are: a Unix socket names a path, not a port. */
const SOCKET_TARGET = /^unix(-abstract)?:./;

/** A port in decimal digits from 1 to 65535. */
const isPort = (text: string): boolean => /^\d{1,5}$/.test(text) && Number(text) >= 1 && Number(text) <= 65_535;

/**
 * Whether Node's Resolver.setServers takes `server`, the DNS server of a `dns://SERVER/` target
 * (grpc-js passes it on when it builds the channel): an IP address, `IPv4:PORT` or `[IP]:PORT`.
 * It throws on a name, and port 0 aborts the process in c-ares.
 */
function isDnsServer(server: string): boolean {
  if (isIP(server) !== 0) return true;
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::([^:]*))?$/.exec(server);
  return match !== null && isIP(match[1] ?? match[2]!) !== 0 && (match[3] === undefined || isPort(match[3]));
}

/**
 * `target` when it names a port dispatchctl can reach: HOST:PORT (`[::1]:PORT` for IPv6), or the
 * gRPC forms `dns:[//SERVER/]HOST:PORT` (SERVER as isDnsServer says), `ipv4:`/`ipv6:` lists of
 * them, `unix:PATH`. Throws a UsageError naming `from` otherwise: grpc-js took a port past 65535
 * and failed only at run time, and one left out as 443.
 */
export function checkedTarget(target: string, from: string): string {
  if (SOCKET_TARGET.test(target)) return target;
  const server = /^dns:\/\/([^/]*)\//.exec(target)?.[1];
  if (server && !isDnsServer(server)) {
    throw new UsageError(`${from}: the DNS server of dns://SERVER/HOST:PORT must be an IP address, with a :PORT from 1 to 65535 or none ([IPv6]:PORT); got ${JSON.stringify(target)}`, false);
  }
  const list = /^ipv[46]:(.*)$/.exec(target);
  const addresses = list ? list[1]!.split(',') : [target.replace(/^dns:(\/\/[^/]*\/)?/, '')];
  for (const address of addresses) {
    const match = /^(\[[^\]]+\]|[^:[\]]+):([^:]*)$/.exec(address);
    if (!match || !isPort(match[2]!)) {
      throw new UsageError(`${from} must be HOST:PORT with a port from 1 to 65535 ([::1]:PORT for IPv6), or unix:PATH; got ${JSON.stringify(target)}`, false);
    }
  }
  return target;
}

/**
 * What OpenSSL says when the answer to its ClientHello is no TLS record (a plaintext HTTP/2
 * server's SETTINGS frame): `wrong version number`, or `packet length too long` when the bytes
 * read as a huge record.
 */
const NOT_TLS = /wrong version number|packet length too long/i;

/**
 * A hint for an error the channel meets at a server that does not speak its protocol: a plaintext
 * channel at a TLS server (grpc-js says only "Failed to connect" when the server drops a connection
 * that does not start with a TLS handshake), or a TLS channel at a plaintext one (grpc-js passes on
 * OpenSSL's `wrong version number`, which names neither TLS nor the flag).
 */
export function connectionHint(error: { readonly code?: unknown; readonly details?: string }, tls: boolean): string {
  if (error.code !== grpc.status.UNAVAILABLE) return '';
  if (tls) return NOT_TLS.test(error.details ?? '') ? ' (the server does not speak TLS on this port; drop --tls and any --tls-ca, --tls-cert, --tls-key or DISPATCH_TLS_* setting)' : '';
  if (!/Failed to connect/.test(error.details ?? '')) return '';
  return ' (is the server using TLS? pass --tls-ca FILE, or --tls when its certificate is from a public CA)';
}

/** An environment variable, an empty one counting as unset. */
const setting = (env: NodeJS.ProcessEnv, name: string): string | undefined => (env[name] === '' ? undefined : env[name]);

/** A file setting and where it came from (a flag or an environment variable), named in its errors. */
interface FileSetting {
  readonly file: string;
  readonly from: string;
}

/** The file of `flag`, else of the variable `name` (an empty one counting as unset); undefined when neither is set. */
function fileSetting(flags: ConnectionFlags, flag: '--tls-ca' | '--tls-cert' | '--tls-key', env: NodeJS.ProcessEnv, name: string): FileSetting | undefined {
  const given = flags[flag.slice(2) as 'tls-ca' | 'tls-cert' | 'tls-key'];
  if (given !== undefined) return { file: given, from: flag };
  const set = setting(env, name);
  return set === undefined ? undefined : { file: set, from: name };
}

function read({ from: flag, file }: FileSetting): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new Error(`cannot read ${flag} ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

/**
 * The bearer token without surrounding whitespace (a newline left by `$(cat file)` or a Secret
 * written with one); throws when it holds a character a gRPC header cannot carry. The message
 * never shows the token.
 */
function bearerToken(flags: ConnectionFlags, env: NodeJS.ProcessEnv): string | undefined {
  const source = flags.token !== undefined ? '--token' : 'DISPATCH_TOKEN';
  const token = (flags.token ?? env.DISPATCH_TOKEN)?.trim();
  if (!token) return undefined;
  const bad = /[^\x21-\x7e]/.exec(token);
  if (bad) {
    const c = bad[0];
    const what = /\s/.test(c) ? 'whitespace' : c < ' ' || c === '\x7f' ? 'a control character' : 'a non-ASCII character';
    throw new UsageError(`the token in ${source} holds ${what} at position ${bad.index + 1}; a bearer token is visible ASCII (the token is not shown)`, false);
  }
  return token;
}

function timeoutMs(text: string | undefined, defaultSeconds: number): number {
  if (text === undefined) return defaultSeconds * 1000;
  const seconds = /^\s*$/.test(text) ? NaN : Number(text);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_TIMEOUT_SECONDS) {
    throw new UsageError(`--timeout must be a number of seconds greater than 0 and at most ${MAX_TIMEOUT_SECONDS}, got ${JSON.stringify(text)}`);
  }
  return Math.max(1, Math.round(seconds * 1000));
}

/**
 * The connection from flags, then DISPATCH_ADDRESS, DISPATCH_TOKEN and DISPATCH_TLS_CA / _CERT /
 * _KEY (the names dispatchd reads for its side). TLS is on with --tls (the system's CAs) or any
 * TLS file. A token is never sent in plaintext beyond loopback unless --allow-plaintext-token.
 * The deadline is --timeout's, else `defaultSeconds` (a turn's command gives DEFAULT_TURN_TIMEOUT_SECONDS).
 */
export function resolveConnection(flags: ConnectionFlags, env: NodeJS.ProcessEnv, defaultSeconds = DEFAULT_TIMEOUT_SECONDS): Connection {
  const fromEnv = flags.address === undefined ? setting(env, 'DISPATCH_ADDRESS') : undefined;
  const address = checkedTarget(flags.address ?? fromEnv ?? '127.0.0.1:50051', fromEnv === undefined ? '--address' : 'DISPATCH_ADDRESS');
  const token = bearerToken(flags, env);
  const deadlineMs = timeoutMs(flags.timeout, defaultSeconds);
  const ca = fileSetting(flags, '--tls-ca', env, 'DISPATCH_TLS_CA');
  const cert = fileSetting(flags, '--tls-cert', env, 'DISPATCH_TLS_CERT');
  const key = fileSetting(flags, '--tls-key', env, 'DISPATCH_TLS_KEY');
  if ((cert === undefined) !== (key === undefined)) {
    const [given, missing] = cert ? [cert.from, '--tls-key (DISPATCH_TLS_KEY)'] : [key!.from, '--tls-cert (DISPATCH_TLS_CERT)'];
    throw new UsageError(`--tls-cert and --tls-key must be given together: ${given} is set, ${missing} is not`);
  }
  const tls = flags.tls === true || ca !== undefined || cert !== undefined;
  if (token !== undefined && !tls && !flags['allow-plaintext-token'] && !isLocalTarget(address)) {
    throw new UsageError(
      `refusing to send the token in plaintext to ${address}, which is not a loopback address (127.0.0.0/8, ::1, localhost): ` +
        'use --tls (the system CAs) or --tls-ca FILE, or --allow-plaintext-token when the connection is protected otherwise (a service mesh, a tunnel)',
      false,
    );
  }
  return { address, credentials: tls ? tlsCredentials(ca, cert, key) : grpc.credentials.createInsecure(), tls, token, deadlineMs };
}

/**
 * TLS credentials: the server verified against `ca` (else the system's CAs), `cert` and `key`
 * presented (mutual TLS). The files are checked as dispatchd checks its own: Node's TLS would
 * take a CA bundle of garbage and then fail every handshake.
 */
function tlsCredentials(ca: FileSetting | undefined, cert: FileSetting | undefined, key: FileSetting | undefined): grpc.ChannelCredentials {
  const caPem = ca === undefined ? null : read(ca);
  const identity = cert === undefined || key === undefined ? undefined : { cert: read(cert), key: read(key) };
  const problem = (caPem && caProblem(caPem, ca!.file)) || (identity && identityProblem(identity.cert, identity.key, { cert: cert!.file, key: key!.file }));
  if (!problem) return grpc.credentials.createSsl(caPem, identity?.key ?? null, identity?.cert ?? null);
  // A file named by a variable (the flags are named by the file the user typed) is said to come from it.
  const variables = [ca, cert, key].filter((s): s is FileSetting => s !== undefined && !s.from.startsWith('--') && problem.includes(s.file));
  throw new Error(variables.length > 0 ? `${problem} (from ${variables.map((s) => s.from).join(', ')})` : problem);
}
