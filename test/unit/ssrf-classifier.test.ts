import { classifyAddress, isAllowedAddress, parseIPv6 } from '#shared/net/address-class.ts';

// The address classifier of the SSRF guard, on strings only (no network).

test.each([
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['::1', 'loopback'],
  ['[::1]', 'loopback'],
  ['10.0.0.1', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['169.254.169.254', 'metadata'],
  ['fd00:ec2::254', 'metadata'],
  ['168.63.129.16', 'metadata'],
  ['169.254.1.1', 'link-local'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['febf::1', 'link-local'],
  ['fc00::1', 'unique-local'],
  ['fd12:3456:789a::1', 'unique-local'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['::', 'unspecified'],
  ['100.64.0.1', 'cgnat'],
  ['100.127.255.255', 'cgnat'],
  ['100.100.100.200', 'cgnat'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['ff02::1', 'multicast'],
  ['255.255.255.255', 'reserved'],
  ['240.0.0.1', 'reserved'],
  ['192.0.2.10', 'reserved'],
  ['198.18.0.1', 'reserved'],
  ['2001:db8::1', 'reserved'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'], // Teredo for public 192.0.2.45 → documentation, reserved
  ['fec0::1', 'private'],
  // IPv4 embedded in IPv6: classified by the IPv4 address.
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['[::ffff:127.0.0.1]', 'loopback'],
  ['::ffff:10.1.2.3', 'private'],
  ['::ffff:169.254.169.254', 'metadata'],
  ['::ffff:a9fe:a9fe', 'metadata'],
  ['::127.0.0.1', 'loopback'],
  ['64:ff9b::192.168.0.1', 'private'],
  ['64:ff9b::8.8.8.8', 'public'],
  ['2002:7f00:1::', 'loopback'],
  ['2002:0a00:0001::1', 'private'],
  ['::ffff:8.8.8.8', 'public'],
  // IPv4-translated (::ffff:0:a.b.c.d); the address it embeds decides.
  ['::ffff:0:127.0.0.1', 'loopback'],
  ['::ffff:0:7f00:1', 'loopback'],
  ['0:0:0:0:ffff:0:7f00:1', 'loopback'],
  ['[::ffff:0:169.254.169.254]', 'metadata'],
  ['::ffff:0:a9fe:a9fe', 'metadata'],
  ['::ffff:0:10.0.0.1', 'private'],
  ['::ffff:0:c0a8:101', 'private'],
  ['::ffff:0:100.64.0.1', 'cgnat'],
  ['::ffff:0:8.8.8.8', 'public'],
  // NAT64: the well-known /96 by its IPv4; local use (64:ff9b:1::/48, IPv4 after the u-octet) never public.
  ['64:ff9b::7f00:1', 'loopback'],
  ['64:ff9b::10.0.0.1', 'private'],
  ['64:ff9b:1:7f00:1::', 'loopback'],
  ['64:ff9b:1:a9fe:a9:fe00::', 'metadata'],
  ['64:ff9b:1:808:8:800::', 'reserved'],
  ['64:ff9b:0:1::7f00:1', 'reserved'],
  // 6to4 by its IPv4.
  ['2002:a9fe:a9fe::1', 'metadata'],
  ['2002:c0a8:101::', 'private'],
  ['2002:808:808::1', 'public'],
  // Teredo: the client address is the last 32 bits inverted; a public one is still refused.
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'],
  ['2001::80ff:fffe', 'loopback'],
  ['2001:0:4136:e378:8000:63bf:5601:5601', 'metadata'],
  ['2001:0:4136:e378:8000:63bf:f5ff:fffe', 'private'],
  ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'reserved'],
  // Outside global unicast (2000::/3) nothing is public.
  ['::1:0:0:1', 'reserved'],
  ['1::1', 'reserved'],
  ['4000::1', 'reserved'],
  ['3fff::1', 'reserved'],
  ['2001:2::1', 'reserved'],
  // Public.
  ['8.8.8.8', 'public'],
  ['1.1.1.1', 'public'],
  ['172.32.0.1', 'public'],
  ['100.128.0.1', 'public'],
  ['169.253.255.255', 'public'],
  ['2606:4700:4700::1111', 'public'],
  ['2a00:1450:4001:80b::200e', 'public'],
])('%s is %s', (address, expected) => {
  expect(classifyAddress(address)).toBe(expected);
});

test.each([
  '',
  'localhost',
  'example.com',
  '127.1',
  '0x7f.0.0.1',
  '0177.0.0.1',
  '2130706433',
  '1.2.3.4.5',
  '256.1.1.1',
  ':::1',
  '1::2::3',
  'fe80::zz',
  '::ffff:300.1.1.1',
])('%s is not an address literal the classifier accepts (the URL parser normalises first)', (text) => {
  expect(classifyAddress(text)).toBe('invalid');
});

test('IPv6 parsing expands :: and embedded IPv4', () => {
  expect(parseIPv6('::ffff:1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4]);
  expect(parseIPv6('1:2:3:4:5:6:7:8')).toEqual([0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8]);
  expect(parseIPv6('1:2:3:4:5:6:7:8:9')).toBeUndefined();
});

test('only public addresses are allowed, and loopback only when the setting says so', () => {
  expect(isAllowedAddress('public', false)).toBe(true);
  expect(isAllowedAddress('loopback', false)).toBe(false);
  expect(isAllowedAddress('loopback', true)).toBe(true);
  for (const cls of [
    'private',
    'link-local',
    'metadata',
    'unspecified',
    'cgnat',
    'multicast',
    'unique-local',
    'reserved',
    'invalid',
  ] as const) {
    expect(isAllowedAddress(cls, true)).toBe(false);
  }
});
