import { BlockList, isIP } from 'node:net';
import { canonicalAddress, embeddedIPv4 } from './ip-address';

/** The operator's destination rules for HTTP tools registered by RPC (`registry:` in the config). */
export interface DestinationRules {
  /** When non-empty, the only destinations allowed (a deny rule still wins). @default [] */
  readonly httpAllow?: readonly string[];
  /** Destinations refused, on top of the built-in rules. @default [] */
  readonly httpDeny?: readonly string[];
}

/**
 * Decides where an HTTP tool registered by a tenant may connect. Each check returns the rule that
 * refuses the destination, as a user reads it, or undefined when it is allowed.
 */
export interface DestinationPolicy {
  /**
   * A URL's host as registered (`new URL(url).hostname`): a literal address is checked as an
   * address; a host name only against host-name rules, since the addresses it resolves to are
   * checked when the tool connects.
   */
  checkHost(host: string): string | undefined;
  /**
   * An address the tool is about to connect to, and the host name it was resolved from, if any.
   * An IPv6 address that embeds an IPv4 one (NAT64, 6to4, Teredo, ::a.b.c.d; see embeddedIPv4)
   * is checked as both, and refused when either would be.
   */
  checkAddress(address: string, host?: string): string | undefined;
}

/** The addresses only this machine reaches: the rules' `loopback`, and what the CLIs call local. */
export const LOOPBACK_RANGES: readonly string[] = Object.freeze(['127.0.0.0/8', '::1/128']);

/** Ranges that the words `loopback`, `private` and `link-local` stand for in the rules. */
export const RANGE_NAMES: Readonly<Record<string, readonly string[]>> = Object.freeze({
  loopback: LOOPBACK_RANGES,
  private: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', 'fc00::/7'],
  'link-local': ['169.254.0.0/16', 'fe80::/10'],
});

/**
 * Refused whatever the rules say: link-local (where cloud metadata services answer,
 * 169.254.169.254), the other metadata addresses, and the unspecified addresses (connecting to
 * 0.0.0.0 or :: reaches the host itself on Linux).
 */
const BUILT_IN: readonly (readonly [entry: string, why: string])[] = [
  ['169.254.0.0/16', 'link-local, cloud metadata'],
  ['fe80::/10', 'link-local'],
  ['fd00:ec2::254', 'AWS metadata'],
  ['100.100.100.200', 'Alibaba Cloud metadata'],
  ['metadata.google.internal', 'GCP metadata'],
  ['0.0.0.0/8', 'this host'],
  ['::', 'this host'],
];

interface Rule {
  readonly text: string;
  readonly addresses?: BlockList;
  readonly host?: (host: string) => boolean;
}

const HOST_NAME = /^(\*\.)?([a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/;

const trimDot = (host: string) => host.toLowerCase().replace(/\.$/, '');

/** Adds a CIDR range or an address (`::ffff:`-mapped ones in IPv4 terms) to `list`; false when `range` is neither. */
export function addRange(list: BlockList, range: string): boolean {
  const [address = '', bits, extra] = range.split('/');
  const canonical = canonicalAddress(address);
  if (!canonical || extra !== undefined) return false;
  const family = isIP(canonical) === 4 ? 'ipv4' : 'ipv6';
  const max = family === 'ipv4' ? 32 : 128;
  // An IPv4-mapped range (::ffff:a.b.c.d/104) is written in IPv4 terms, as addresses are checked.
  const prefix = bits === undefined ? max : Number(bits) - (family === 'ipv4' && isIP(address) === 6 ? 96 : 0);
  if (bits !== undefined && !/^\d{1,3}$/.test(bits)) return false;
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) return false;
  list.addSubnet(canonical, prefix, family);
  return true;
}

/** Compiles one entry (an address, a CIDR range, a host name, `*.domain`, or a range name); undefined when it is none of these. */
function compileEntry(entry: string, text: string): Rule | undefined {
  // Only the names' own entries: `constructor` found Object's and failed as "not iterable".
  const named = Object.hasOwn(RANGE_NAMES, entry) ? RANGE_NAMES[entry] : undefined;
  if (named || entry.includes('/') || isIP(entry.replace(/^\[|\]$/g, '')) !== 0) {
    const addresses = new BlockList();
    for (const range of named ?? [entry.replace(/^\[|\]$/g, '')]) if (!addRange(addresses, range)) return undefined;
    return { text, addresses };
  }
  const host = trimDot(entry);
  if (!HOST_NAME.test(host) || host.length > 253) return undefined;
  if (host.startsWith('*.')) {
    const suffix = host.slice(1);
    return { text, host: (name) => name.endsWith(suffix) };
  }
  return { text, host: (name) => name === host };
}

function compileList(key: string, entries: readonly string[]): Rule[] {
  return entries.map((entry, i) => {
    const rule = typeof entry === 'string' ? compileEntry(entry.trim(), `${key} "${entry}"`) : undefined;
    if (!rule) {
      throw new RangeError(`${key}[${i}]: ${JSON.stringify(entry)} is not an address, a CIDR range, a host name, *.domain, or one of ${Object.keys(RANGE_NAMES).join(', ')}`);
    }
    return rule;
  });
}

const BUILT_IN_RULES: readonly Rule[] = BUILT_IN.map(([entry, why]) => compileEntry(entry, `the built-in rule ${entry} (${why})`)!);

/**
 * Compiles the rules, throwing a RangeError naming the first bad entry. A destination is refused
 * when a built-in rule or an `http_deny` entry matches it, or when `http_allow` is non-empty and
 * no entry of it does: a deny always wins over an allow. An address that embeds an IPv4 one is
 * refused when either address is.
 */
export function createDestinationPolicy(rules: DestinationRules = {}): DestinationPolicy {
  const deny = [...BUILT_IN_RULES, ...compileList('registry.http_deny', rules.httpDeny ?? [])];
  const allow = compileList('registry.http_allow', rules.httpAllow ?? []);
  const allowsAddresses = allow.some((rule) => rule.addresses);
  const matches = (rule: Rule, address: string | undefined, host: string | undefined) =>
    (address !== undefined && rule.addresses?.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6') === true) ||
    (host !== undefined && rule.host?.(host) === true);
  const NOT_ALLOWED = 'registry.http_allow (it is not listed there)';

  return {
    checkHost(rawHost) {
      const address = canonicalAddress(rawHost.replace(/^\[|\]$/g, ''));
      if (address) return this.checkAddress(address);
      const host = trimDot(rawHost);
      const denied = deny.find((rule) => matches(rule, undefined, host));
      if (denied) return denied.text;
      // A name may still resolve to an allowed address: only a list without addresses settles it here.
      if (allow.length > 0 && !allowsAddresses && !allow.some((rule) => matches(rule, undefined, host))) return NOT_ALLOWED;
      return undefined;
    },
    checkAddress(rawAddress, rawHost) {
      const address = canonicalAddress(rawAddress) ?? rawAddress;
      const host = rawHost === undefined ? undefined : trimDot(rawHost);
      // A translator, a tunnel or the host itself may connect to the IPv4 address an IPv6 one embeds: each must pass.
      const embedded = embeddedIPv4(address);
      for (const candidate of [address, ...embedded]) {
        const denied = deny.find((rule) => matches(rule, candidate, host));
        if (denied) return candidate === address ? denied.text : `${denied.text}, as ${candidate}, the IPv4 address it embeds`;
      }
      if (allow.length === 0) return undefined;
      if (!allow.some((rule) => matches(rule, address, host))) return NOT_ALLOWED;
      const outside = embedded.find((candidate) => !allow.some((rule) => matches(rule, candidate, host)));
      return outside === undefined ? undefined : `registry.http_allow (${outside}, the IPv4 address it embeds, is not listed there)`;
    },
  };
}
