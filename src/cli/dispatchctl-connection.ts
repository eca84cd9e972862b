import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { caProblem, identityProblem } from '../auth/certificate-check';
import { isLocalTarget } from './loopback';
import { UsageError } from './usage';

/** The deadline of each call dispatchctl makes (not of `events`), in seconds. @default 120 */
export const DEFAULT_TIMEOUT_SECONDS = 120;

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

/** An environment variable, an empty one counting as unset. */
const setting = (env: NodeJS.ProcessEnv, name: string): string | undefined => (env[name] === '' ? undefined : env[name]);

function read(flag: string, file: string): Buffer {
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

function timeoutMs(text: string | undefined): number {
  if (text === undefined) return DEFAULT_TIMEOUT_SECONDS * 1000;
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
 */
export function resolveConnection(flags: ConnectionFlags, env: NodeJS.ProcessEnv): Connection {
  const address = flags.address ?? setting(env, 'DISPATCH_ADDRESS') ?? '127.0.0.1:50051';
  const token = bearerToken(flags, env);
  const deadlineMs = timeoutMs(flags.timeout);
  const ca = flags['tls-ca'] ?? setting(env, 'DISPATCH_TLS_CA');
  const cert = flags['tls-cert'] ?? setting(env, 'DISPATCH_TLS_CERT');
  const key = flags['tls-key'] ?? setting(env, 'DISPATCH_TLS_KEY');
  if ((cert === undefined) !== (key === undefined)) throw new UsageError('--tls-cert and --tls-key must be given together');
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
function tlsCredentials(ca: string | undefined, cert: string | undefined, key: string | undefined): grpc.ChannelCredentials {
  const caPem = ca === undefined ? null : read('--tls-ca', ca);
  const identity = cert === undefined || key === undefined ? undefined : { cert: read('--tls-cert', cert), key: read('--tls-key', key) };
  const problem = (caPem && caProblem(caPem, ca!)) || (identity && identityProblem(identity.cert, identity.key, { cert: cert!, key: key! }));
  if (problem) throw new Error(problem);
  return grpc.credentials.createSsl(caPem, identity?.key ?? null, identity?.cert ?? null);
}
