import { BlockList, isIP } from 'node:net';
import { addRange, LOOPBACK_RANGES } from '../registry/destination-policy';

/** 127.0.0.0/8 and ::1; an IPv4-mapped address (::ffff:127.0.0.1) is checked as the IPv4 one. */
const LOOPBACK = new BlockList();
for (const range of LOOPBACK_RANGES) addRange(LOOPBACK, range);

/**
 * True for a host only this machine can reach: a literal loopback IP (127.0.0.0/8 in dotted
 * quads, ::1 in any spelling) or the name `localhost`. Any other name is not, however it starts
 * (`127.attacker.example` is a DNS name), nor are shorthand spellings such as `127.1`.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family !== 0) return LOOPBACK.check(bare, family === 4 ? 'ipv4' : 'ipv6');
  return bare.toLowerCase() === 'localhost';
}

/**
 * True when every address of a gRPC target stays on this machine: `HOST:PORT` or `dns:` with a
 * loopback host, `ipv4:`/`ipv6:` lists of loopback addresses, or a Unix socket (`unix:`,
 * `unix-abstract:`).
 */
export function isLocalTarget(target: string): boolean {
  if (/^unix(-abstract)?:/.test(target)) return true;
  const list = /^ipv[46]:(.*)$/.exec(target);
  const addresses = list ? list[1]!.split(',') : [target.replace(/^dns:(\/\/[^/]*\/)?/, '')];
  return addresses.every((address) => isLoopbackHost(isIP(address) !== 0 ? address : address.replace(/:\d+$/, '')));
}
