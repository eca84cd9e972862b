// Where the HTTP tools of tenants may connect: the built-in rules, the operator's http_allow and
// http_deny, IPv4-mapped IPv6 spellings, and the messages a bad entry gives.
import { canonicalAddress, createDestinationPolicy } from '../../src/registry';

const LINK_LOCAL = 'the built-in rule 169.254.0.0/16 (link-local, cloud metadata)';

test('the built-in rules refuse link-local, the metadata addresses and the unspecified addresses, whatever the spelling', () => {
  const policy = createDestinationPolicy();
  for (const host of ['169.254.169.254', '[::ffff:169.254.169.254]', '[::ffff:a9fe:a9fe]', '[0:0:0:0:0:ffff:a9fe:a9fe]', '169.254.0.1']) {
    expect(policy.checkHost(host)).toBe(LINK_LOCAL);
  }
  expect(policy.checkHost('[fe80::1]')).toBe('the built-in rule fe80::/10 (link-local)');
  expect(policy.checkAddress('fe80::1%eth0')).toBe('the built-in rule fe80::/10 (link-local)');
  expect(policy.checkHost('[fd00:ec2::254]')).toBe('the built-in rule fd00:ec2::254 (AWS metadata)');
  expect(policy.checkHost('100.100.100.200')).toBe('the built-in rule 100.100.100.200 (Alibaba Cloud metadata)');
  expect(policy.checkHost('Metadata.Google.Internal.')).toBe('the built-in rule metadata.google.internal (GCP metadata)');
  expect(policy.checkHost('0.0.0.0')).toBe('the built-in rule 0.0.0.0/8 (this host)');
  expect(policy.checkHost('[::]')).toBe('the built-in rule :: (this host)');
});

test('by default loopback, private ranges and public addresses are allowed; a host name is left to connect time', () => {
  const policy = createDestinationPolicy();
  for (const host of ['127.0.0.1', '[::1]', '10.1.2.3', '192.168.0.1', '172.16.5.4', '8.8.8.8', 'tools.example.com', 'localhost']) {
    expect(policy.checkHost(host)).toBeUndefined();
  }
  expect(policy.checkAddress('169.254.169.254', 'rebound.example.com')).toBe(LINK_LOCAL);
});

test('http_deny adds ranges, range names and host names; a built-in rule cannot be allowed back', () => {
  const policy = createDestinationPolicy({ httpDeny: ['loopback', 'private', '203.0.113.0/24', '*.internal.example', 'admin.example.com'], httpAllow: ['169.254.169.254', '0.0.0.0/0', '::/0', '*.example.com', 'localhost'] });
  expect(policy.checkHost('127.0.0.2')).toBe('registry.http_deny "loopback"');
  expect(policy.checkHost('[::1]')).toBe('registry.http_deny "loopback"');
  expect(policy.checkHost('[::ffff:127.0.0.1]')).toBe('registry.http_deny "loopback"');
  expect(policy.checkAddress('127.0.0.1', 'localhost')).toBe('registry.http_deny "loopback"');
  expect(policy.checkHost('172.31.255.255')).toBe('registry.http_deny "private"');
  expect(policy.checkHost('[fd12::1]')).toBe('registry.http_deny "private"');
  expect(policy.checkHost('203.0.113.9')).toBe('registry.http_deny "203.0.113.0/24"');
  expect(policy.checkHost('db.internal.example')).toBe('registry.http_deny "*.internal.example"');
  expect(policy.checkHost('internal.example')).toBeUndefined();
  expect(policy.checkHost('admin.example.com')).toBe('registry.http_deny "admin.example.com"');
  expect(policy.checkHost('169.254.169.254')).toBe(LINK_LOCAL);
  expect(policy.checkHost('8.8.8.8')).toBeUndefined();
});

test('a non-empty http_allow is the whole list of destinations: a name by name, an address by range', () => {
  const byName = createDestinationPolicy({ httpAllow: ['*.tools.example.com', 'localhost'] });
  expect(byName.checkHost('a.tools.example.com')).toBeUndefined();
  expect(byName.checkHost('localhost')).toBeUndefined();
  expect(byName.checkAddress('127.0.0.1', 'localhost')).toBeUndefined();
  expect(byName.checkHost('evil.example.org')).toBe('registry.http_allow (it is not listed there)');
  expect(byName.checkHost('127.0.0.1')).toBe('registry.http_allow (it is not listed there)');
  const byRange = createDestinationPolicy({ httpAllow: ['10.0.0.0/8', '2001:db8::/32'] });
  expect(byRange.checkHost('10.9.8.7')).toBeUndefined();
  expect(byRange.checkHost('[2001:db8::5]')).toBeUndefined();
  expect(byRange.checkHost('11.0.0.1')).toBe('registry.http_allow (it is not listed there)');
  // A name may resolve into an allowed range: it is checked when the tool connects.
  expect(byRange.checkHost('svc.cluster.local')).toBeUndefined();
  expect(byRange.checkAddress('10.0.0.5', 'svc.cluster.local')).toBeUndefined();
  expect(byRange.checkAddress('192.168.1.1', 'svc.cluster.local')).toBe('registry.http_allow (it is not listed there)');
});

test('a bad entry is refused with a message naming it', () => {
  const names = 'is not an address, a CIDR range, a host name, *.domain, or one of loopback, private, link-local';
  expect(() => createDestinationPolicy({ httpDeny: ['10.0.0.0/8', '10.0.0.0/33'] })).toThrow(`registry.http_deny[1]: "10.0.0.0/33" ${names}`);
  expect(() => createDestinationPolicy({ httpAllow: ['http://tools.example.com/'] })).toThrow(`registry.http_allow[0]: "http://tools.example.com/" ${names}`);
  expect(() => createDestinationPolicy({ httpDeny: ['fe80::/129'] })).toThrow(`registry.http_deny[0]: "fe80::/129" ${names}`);
  expect(() => createDestinationPolicy({ httpDeny: [42 as unknown as string] })).toThrow(`registry.http_deny[0]: 42 ${names}`);
});

test('canonicalAddress turns IPv4-mapped IPv6 into IPv4 and drops zones', () => {
  expect(canonicalAddress('::ffff:10.0.0.1')).toBe('10.0.0.1');
  expect(canonicalAddress('::FFFF:0a00:0001')).toBe('10.0.0.1');
  expect(canonicalAddress('fe80::1%lo')).toBe('fe80::1');
  expect(canonicalAddress('2001:DB8::1')).toBe('2001:db8::1');
  expect(canonicalAddress('::1')).toBe('::1');
  expect(canonicalAddress('localhost')).toBeUndefined();
});

const EMBEDS = (address: string) => `, as ${address}, the IPv4 address it embeds`;

test.each([
  '[::a9fe:a9fe]',
  '[::169.254.169.254]',
  '[::ffff:0:a9fe:a9fe]',
  '[64:ff9b::a9fe:a9fe]',
  '[64:ff9b:1::a9fe:a9fe]',
  '[2002:a9fe:a9fe::1]',
  '[2001:0:4136:e378:8000:63bf:5601:5601]',
  '[2001:db8::5efe:a9fe:a9fe]',
])('the built-in rules refuse 169.254.169.254 embedded in IPv6 as %s', (host) => {
  expect(createDestinationPolicy().checkHost(host)).toBe(`${LINK_LOCAL}${EMBEDS('169.254.169.254')}`);
  expect(createDestinationPolicy().checkAddress(host.slice(1, -1), 'rebound.example.com')).toBe(`${LINK_LOCAL}${EMBEDS('169.254.169.254')}`);
});

test('the other built-in IPv4 rules apply to an embedded address too; ::, ::1 and addresses embedding a public one are as before', () => {
  const policy = createDestinationPolicy();
  expect(policy.checkHost('[64:ff9b::6464:64c8]')).toBe(`the built-in rule 100.100.100.200 (Alibaba Cloud metadata)${EMBEDS('100.100.100.200')}`);
  expect(policy.checkHost('[2002::1]')).toBeUndefined();
  expect(policy.checkHost('[::]')).toBe('the built-in rule :: (this host)');
  for (const host of ['[::1]', '[64:ff9b::808:808]', '[2002:808:808::1]', '[2001:0:4136:e378:8000:63bf:3fff:fdd2]', '[64:ff9b:1::c000:201]', '[2001:db8::1]']) {
    expect(policy.checkHost(host)).toBeUndefined();
  }
});

test.each([
  ['[::a00:1]', '10.0.0.1'],
  ['[::10.1.2.3]', '10.1.2.3'],
  ['[64:ff9b::a00:1]', '10.0.0.1'],
  ['[64:ff9b:1::a00:1]', '10.0.0.1'],
  ['[2002:a00:1::]', '10.0.0.1'],
  ['[2001:0:4136:e378:8000:63bf:f5ff:fffe]', '10.0.0.1'],
  ['[2001:0:a00:1::1]', '10.0.0.1'],
])('http_deny of 10.0.0.0/8 refuses %s', (host, embedded) => {
  expect(createDestinationPolicy({ httpDeny: ['10.0.0.0/8'] }).checkHost(host)).toBe(`registry.http_deny "10.0.0.0/8"${EMBEDS(embedded)}`);
});

test('http_deny of loopback refuses ::127.0.0.1 by its IPv4 address and ::1 by its own', () => {
  const policy = createDestinationPolicy({ httpDeny: ['loopback'] });
  expect(policy.checkHost('[::7f00:1]')).toBe(`registry.http_deny "loopback"${EMBEDS('127.0.0.1')}`);
  expect(policy.checkHost('[::1]')).toBe('registry.http_deny "loopback"');
  expect(policy.checkAddress('64:ff9b::7f00:1', 'localhost')).toBe(`registry.http_deny "loopback"${EMBEDS('127.0.0.1')}`);
});

test('a deny of an embedded address wins over an allow of the IPv6 one', () => {
  const policy = createDestinationPolicy({ httpAllow: ['::/0', '0.0.0.0/0'], httpDeny: ['private'] });
  expect(policy.checkHost('[2002:c0a8:101::]')).toBe(`registry.http_deny "private"${EMBEDS('192.168.1.1')}`);
  expect(policy.checkHost('[2002:808:808::]')).toBeUndefined();
});

test('with a non-empty http_allow, an address that embeds another is allowed only when both are', () => {
  const v4 = createDestinationPolicy({ httpAllow: ['203.0.113.0/24'] });
  expect(v4.checkHost('[64:ff9b::cb00:7105]')).toBe('registry.http_allow (it is not listed there)');
  const prefix = createDestinationPolicy({ httpAllow: ['64:ff9b::/96'] });
  expect(prefix.checkHost('[64:ff9b::cb00:7105]')).toBe('registry.http_allow (203.0.113.5, the IPv4 address it embeds, is not listed there)');
  const both = createDestinationPolicy({ httpAllow: ['64:ff9b::/96', '203.0.113.0/24'] });
  expect(both.checkHost('[64:ff9b::cb00:7105]')).toBeUndefined();
  expect(both.checkHost('[64:ff9b::808:808]')).toBe('registry.http_allow (8.8.8.8, the IPv4 address it embeds, is not listed there)');
  const byName = createDestinationPolicy({ httpAllow: ['*.tools.example.com'] });
  expect(byName.checkAddress('64:ff9b::808:808', 'a.tools.example.com')).toBeUndefined();
});

test('a host named like an object property (constructor, valueof) is a host name, not a range name', () => {
  // RANGE_NAMES["constructor"] found Object's own and the start failed "is not iterable".
  const policy = createDestinationPolicy({ httpAllow: ['constructor', 'valueof'], httpDeny: ['tostring'] });
  expect(policy.checkHost('constructor')).toBeUndefined();
  expect(policy.checkHost('valueof')).toBeUndefined();
  expect(policy.checkHost('tostring')).toBe('registry.http_deny "tostring"');
  expect(policy.checkHost('10.0.0.1')).toBe('registry.http_allow (it is not listed there)');
});
