import { isIP } from 'node:net';

/** The eight 16-bit groups of an IPv6 address (Node has checked its syntax with isIP). */
function groups(address: string): number[] {
  let text = address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

/**
 * An IP address as the destination rules check it, or undefined when `text` is not one: an
 * IPv6 zone (`%eth0`) is dropped, and an IPv4-mapped IPv6 address (`::ffff:169.254.169.254`,
 * `::ffff:a9fe:a9fe`) becomes the IPv4 address it reaches, so that it meets the IPv4 rules.
 */
export function canonicalAddress(text: string): string | undefined {
  const address = text.replace(/%.*$/, '');
  const family = isIP(address);
  if (family === 4) return address;
  if (family !== 6) return undefined;
  const g = groups(address);
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) {
    return [g[6]! >> 8, g[6]! & 0xff, g[7]! >> 8, g[7]! & 0xff].join('.');
  }
  return address.toLowerCase();
}

/** A standard form of IPv6 address that writes an IPv4 address in it. */
interface Embedding {
  /** The bytes the form starts with. */
  readonly prefix: readonly number[];
  /** Bytes [from, to) that are zero too. */
  readonly zeros?: readonly [from: number, to: number];
  /** Any other condition on the 16 bytes. */
  readonly test?: (b: readonly number[]) => boolean;
  /** The offsets of the four bytes of each IPv4 address it holds; `inverted`: written with every bit flipped. */
  readonly at: readonly { readonly bytes: readonly number[]; readonly inverted?: true }[];
}

const LAST = { bytes: [12, 13, 14, 15] };

/**
 * The standard forms (IPv4-mapped ::ffff:0:0/96 is not here: canonicalAddress makes it IPv4).
 * NAT64's local-use /48 is read as a /96 prefix, as networks use it: RFC 6052 also allows a /48,
 * /56 or /64 there, but which one a network uses is not in the address, and reading them all
 * would make every /96 address embed 0.0.0.x as well.
 */
const EMBEDDINGS: readonly Embedding[] = [
  // IPv4-compatible ::a.b.c.d (RFC 4291); ::1 is loopback, not 0.0.0.1.
  { prefix: [], zeros: [0, 12], test: (b) => b.slice(12).join('.') !== '0.0.0.1', at: [LAST] },
  // IPv4-translated ::ffff:0:a.b.c.d (RFC 2765).
  { prefix: [0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], zeros: [10, 12], at: [LAST] },
  // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052).
  { prefix: [0, 0x64, 0xff, 0x9b], zeros: [4, 12], at: [LAST] },
  // NAT64 local-use 64:ff9b:1::/48 (RFC 8215).
  { prefix: [0, 0x64, 0xff, 0x9b, 0, 1], at: [LAST] },
  // 6to4 2002::/16 (RFC 3056).
  { prefix: [0x20, 0x02], at: [{ bytes: [2, 3, 4, 5] }] },
  // Teredo 2001::/32 (RFC 4380): the server, and the client inverted.
  { prefix: [0x20, 0x01, 0, 0], at: [{ bytes: [4, 5, 6, 7] }, { ...LAST, inverted: true }] },
  // ISATAP (RFC 5214): the interface identifier 0:5efe:a.b.c.d, or 200:5efe:a.b.c.d, under any prefix.
  { prefix: [], test: (b) => (b[8]! & 0xfd) === 0 && b[9] === 0 && b[10] === 0x5e && b[11] === 0xfe, at: [LAST] },
];

/**
 * The IPv4 addresses that an IPv6 address embeds by a standard form (IPv4-compatible or
 * -translated, NAT64, 6to4, Teredo, ISATAP), which a tunnel, a translator or the host may connect
 * to when asked for the IPv6 one; [] for an IPv4 address, any other IPv6 address, or a name. A
 * reading of all zeros embeds nothing.
 */
export function embeddedIPv4(text: string): string[] {
  const address = text.replace(/%.*$/, '');
  if (isIP(address) !== 6) return [];
  const b = groups(address).flatMap((g) => [g >> 8, g & 0xff]);
  const found = new Set<string>();
  for (const form of EMBEDDINGS) {
    if (form.prefix.some((x, i) => b[i] !== x)) continue;
    if (form.zeros && b.slice(...form.zeros).some((x) => x !== 0)) continue;
    if (form.test && !form.test(b)) continue;
    for (const { bytes, inverted } of form.at) {
      const octets = bytes.map((i) => (inverted ? b[i]! ^ 0xff : b[i]!));
      if (octets.some((x) => x !== 0)) found.add(octets.join('.'));
    }
  }
  return [...found];
}
