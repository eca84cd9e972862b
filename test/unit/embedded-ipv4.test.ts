// The IPv4 addresses an IPv6 address stands for by a standard embedding (IPv4-compatible and
// -translated, NAT64, 6to4, Teredo, ISATAP), which the destination rules check as well as the IPv6
// address: a table of each form of 169.254.169.254, addresses that embed nothing, and a property
// that every form of any IPv4 address gives that address back.
import fc from 'fast-check';
import { embeddedIPv4 } from '../../src/registry/ip-address';

test.each([
  ['IPv4-compatible', '::a9fe:a9fe'],
  ['IPv4-compatible, dotted', '::169.254.169.254'],
  ['IPv4-translated (SIIT)', '::ffff:0:a9fe:a9fe'],
  ['NAT64 well-known prefix', '64:ff9b::a9fe:a9fe'],
  ['NAT64 well-known prefix, dotted', '64:FF9B::169.254.169.254'],
  ['NAT64 local-use, /96 prefix', '64:ff9b:1::a9fe:a9fe'],
  ['NAT64 local-use, a /96 prefix with a subnet', '64:ff9b:1:ab:cd::a9fe:a9fe'],
  ['6to4', '2002:a9fe:a9fe::1'],
  ['Teredo client (bits inverted)', '2001:0:4136:e378:8000:63bf:5601:5601'],
  ['Teredo server', '2001:0:a9fe:a9fe::ffff:ffff'],
  ['ISATAP', '2001:db8::5efe:a9fe:a9fe'],
  ['ISATAP, universal/local bit set', '2001:db8::200:5efe:169.254.169.254'],
  ['with a zone', '64:ff9b::a9fe:a9fe%eth0'],
])('%s: %s embeds 169.254.169.254', (_form, address) => {
  expect(embeddedIPv4(address)).toContain('169.254.169.254');
});

test.each([
  ['RFC 4380 Teredo example: server and client', '2001:0000:4136:e378:8000:63bf:3fff:fdd2', ['65.54.227.120', '192.0.2.45']],
  ['NAT64 local-use is read as a /96 prefix alone (a /64 reading of this would be 0.0.0.192)', '64:ff9b:1::c000:201', ['192.0.2.1']],
  ['NAT64 local-use: 169.254.169.254 written for a /48 prefix is not read', '64:ff9b:1:a9fe:a9:fe00::', []],
  ['6to4 with an interface id', '2002:c000:201:1::5', ['192.0.2.1']],
  ['loopback ::1 is not IPv4-compatible 0.0.0.1', '::1', []],
  ['the unspecified :: is not IPv4-compatible 0.0.0.0', '::', []],
  ['IPv4-mapped is already IPv4 (canonicalAddress)', '::ffff:a9fe:a9fe', []],
  ['a documentation address', '2001:db8::1', []],
  ['2001:4860:: is not Teredo (2001:0::/32)', '2001:4860:4860::8888', []],
  ['64:ff9b:2:: is neither NAT64 prefix', '64:ff9b:2::a9fe:a9fe', []],
  ['an IPv4 address', '169.254.169.254', []],
  ['a host name', 'metadata.google.internal', []],
])('%s: %s', (_why, address, expected) => {
  expect(embeddedIPv4(address)).toEqual(expected);
});

const hex = (n: number) => n.toString(16);
const forms: readonly ((a: number, b: number, c: number, d: number) => string)[] = [
  (a, b, c, d) => `::${a}.${b}.${c}.${d}`,
  (a, b, c, d) => `::ffff:0:${hex((a << 8) | b)}:${hex((c << 8) | d)}`,
  (a, b, c, d) => `64:ff9b::${a}.${b}.${c}.${d}`,
  (a, b, c, d) => `64:ff9b:1::${a}.${b}.${c}.${d}`,
  (a, b, c, d) => `2002:${hex((a << 8) | b)}:${hex((c << 8) | d)}::1`,
  (a, b, c, d) => `2001:0:4136:e378:8000:63bf:${hex(((a << 8) | b) ^ 0xffff)}:${hex(((c << 8) | d) ^ 0xffff)}`,
  (a, b, c, d) => `fd00::5efe:${a}.${b}.${c}.${d}`,
];

test('every form of any IPv4 address (but 0.0.0.0, and 0.0.0.1 as ::1) embeds that address', () => {
  const octet = fc.integer({ min: 0, max: 255 });
  fc.assert(
    fc.property(octet, octet, octet, octet, fc.constantFrom(...forms), (a, b, c, d, form) => {
      fc.pre(a + b + c + d > 1);
      expect(embeddedIPv4(form(a, b, c, d))).toContain(`${a}.${b}.${c}.${d}`);
    }),
  );
});
