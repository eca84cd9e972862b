import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import type { DestinationPolicy } from '../registry';
import { DestinationDeniedError } from './destination-denied';

/** Options of {@link createHttpTransport}. */
export interface HttpTransportOptions {
  /**
   * undici's time for a tool's response headers, and between two chunks of its body, in ms;
   * 0: none. undici's own defaults (300 s) would cut a tool whose `timeout_ms` is longer, and
   * with a message about undici rather than the tool: the tool's timeout governs, through the
   * call's AbortSignal. Tests lower it to show the mechanism. @default 0
   */
  readonly idleTimeoutMs?: number;
  /** undici's time to make a connection (DNS, TCP and TLS), in ms. @default 10000 (undici's own) */
  readonly connectTimeoutMs?: number;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net.connect that resolves as dns.lookup does, then refuses the connection when
 * an address the name resolves to is denied: checked at each connection, so a name that resolved
 * to a public address at registration and to 169.254.169.254 now (DNS rebinding) is refused.
 */
function guardedLookup(policy: DestinationPolicy) {
  return (host: string, options: LookupAllOptions | { all?: boolean }, callback: LookupCallback): void => {
    dnsLookup(host, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      for (const { address } of addresses) {
        const rule = policy.checkAddress(address, host);
        if (rule !== undefined) return callback(new DestinationDeniedError(address, host, rule), []);
      }
      if (options.all === true) return callback(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
}

/**
 * The undici Agent that HTTP tools connect through. With a policy (tools registered by tenants),
 * every new connection is checked where it is made: a literal address before connecting, a host
 * name's addresses as they resolve. Without one (the operator's tools) connections are not checked.
 */
export function createHttpTransport(policy?: DestinationPolicy, options: HttpTransportOptions = {}): Agent {
  const timeouts = { headersTimeout: options.idleTimeoutMs ?? 0, bodyTimeout: options.idleTimeoutMs ?? 0 };
  const timeout = options.connectTimeoutMs;
  if (!policy) return new Agent({ ...timeouts, connect: { timeout } });
  const connect = buildConnector({ lookup: guardedLookup(policy), timeout } as buildConnector.BuildOptions);
  return new Agent({
    ...timeouts,
    connect(request, callback) {
      // net.connect does not look a literal address up: check it here.
      if (isIP(request.hostname) !== 0) {
        const rule = policy.checkAddress(request.hostname);
        if (rule !== undefined) return callback(new DestinationDeniedError(request.hostname, undefined, rule), null);
      }
      return connect(request, callback);
    },
  });
}
