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
