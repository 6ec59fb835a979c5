// Which addresses the service may fetch a PDF from (docs/DECISIONS.md, PDF ingestion, SSRF). A pure
// classifier over address strings, so the rules are unit-tested without any network. Addresses that
// embed an IPv4 address (IPv4-mapped, IPv4-translated, IPv4-compatible, NAT64, 6to4, Teredo) are
// classified by the address they embed; outside 2000::/3 nothing is public.

type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'metadata'
  | 'unspecified'
  | 'cgnat'
  | 'multicast'
  | 'unique-local'
  | 'reserved'
  | 'invalid';

/** Dotted-quad IPv4 (the canonical form the WHATWG URL parser produces) → 4 bytes. */
function parseIPv4(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const bytes = parts.map((p) => (/^(0|[1-9]\d{0,2})$/.test(p) ? Number(p) : NaN));
  return bytes.every((b) => b >= 0 && b <= 255) ? bytes : undefined;
}

/** IPv6 text (brackets and a zone id allowed) → 16 bytes. */
export function parseIPv6(text: string): number[] | undefined {
  let s = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  s = s.replace(/%.*$/, ''); // zone id
  if (!/^[0-9a-fA-F:.]+$/.test(s)) return undefined;
  let tail: number[] = [];
  const lastColon = s.lastIndexOf(':');
  if (s.includes('.')) {
    const v4 = parseIPv4(s.slice(lastColon + 1));
    if (!v4) return undefined;
    tail = v4;
    s = `${s.slice(0, lastColon + 1)}0:0`; // placeholder groups, replaced below
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const groups = (h: string) => (h === '' ? [] : h.split(':'));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  if (all.length !== 8 || !all.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return undefined;
  const bytes = all.flatMap((g) => {
    const v = parseInt(g, 16);
    return [v >> 8, v & 0xff];
  });
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes;
}

const inV4 = (b: number[], prefix: number[], bits: number) => {
  for (let i = 0; i < 4 && bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((b[i]! & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
};

function classifyIPv4(b: number[]): AddressClass {
  if (inV4(b, [0], 8)) return 'unspecified'; // "this network", 0.0.0.0 included
  if (inV4(b, [127], 8)) return 'loopback';
  if (inV4(b, [10], 8) || inV4(b, [172, 16], 12) || inV4(b, [192, 168], 16)) return 'private';
  if (inV4(b, [169, 254, 169, 254], 32) || inV4(b, [168, 63, 129, 16], 32)) return 'metadata'; // AWS/GCP, Azure
  if (inV4(b, [169, 254], 16)) return 'link-local';
  if (inV4(b, [100, 64], 10)) return 'cgnat'; // shared address space (Alibaba's metadata is in it too)
  if (inV4(b, [224], 4)) return 'multicast';
  if (
    inV4(b, [240], 4) || // reserved and broadcast
    inV4(b, [192, 0, 0], 24) || // IETF protocol assignments
    inV4(b, [192, 0, 2], 24) ||
    inV4(b, [198, 51, 100], 24) ||
    inV4(b, [203, 0, 113], 24) || // documentation
    inV4(b, [198, 18], 15) || // benchmarking
    inV4(b, [192, 88, 99], 24) // 6to4 relay anycast
  )
    return 'reserved';
  return 'public';
}

const startsWith = (b: number[], prefix: number[]) => prefix.every((v, i) => b[i] === v);

/**
 * The class of an IPv4 address carried inside an IPv6 one. `whenPublic` decides what the IPv6
 * address is when the IPv4 one is public: for 6to4 and NAT64 it is an ordinary route to that
 * address; for tunnels we refuse outright (Teredo) it stays reserved.
 */
function embedded(v4: number[], whenPublic: AddressClass): AddressClass {
  const cls = classifyIPv4(v4);
  return cls === 'public' ? whenPublic : cls;
}

function classifyIPv6(b: number[]): AddressClass {
  const zeros = (from: number, to: number) => b.slice(from, to).every((v) => v === 0);
  if (zeros(0, 16)) return 'unspecified';
  if (zeros(0, 15) && b[15] === 1) return 'loopback';
  // Forms that carry an IPv4 address, classified by the IPv4 address: each would
  // reach it through the host's stack, a translator or a relay.
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return classifyIPv4(b.slice(12)); // ::ffff:a.b.c.d, mapped
  if (zeros(0, 8) && b[8] === 0xff && b[9] === 0xff && zeros(10, 12)) return classifyIPv4(b.slice(12)); // ::ffff:0:a.b.c.d, translated (SIIT)
  if (zeros(0, 12)) return classifyIPv4(b.slice(12)); // ::a.b.c.d, compatible (deprecated)
  if (startsWith(b, [0, 0x64, 0xff, 0x9b])) {
    if (zeros(4, 12)) return classifyIPv4(b.slice(12)); // 64:ff9b::/96, NAT64 well-known prefix
    // 64:ff9b:1::/48, NAT64 local use: the IPv4 address sits after the /48 (RFC 6052, skipping
    // the u-octet); the rest of 64:ff9b::/32 is unassigned. Refused either way.
    if (b[4] === 0 && b[5] === 1) return embedded([b[6]!, b[7]!, b[9]!, b[10]!], 'reserved');
    return 'reserved';
  }
  if (startsWith(b, [0x20, 0x02])) return classifyIPv4(b.slice(2, 6)); // 2002::/16, 6to4
  if (startsWith(b, [0x20, 0x01, 0x00, 0x00])) {
    // 2001::/32, Teredo: the client's IPv4 address is the last 32 bits, inverted. The tunnel is
    // never a route we take; the client address only says what the address is aimed at.
    return embedded(
      b.slice(12).map((v) => v ^ 0xff),
      'reserved',
    );
  }
  if (startsWith(b, [0xfd, 0x00, 0x0e, 0xc2]) && zeros(4, 14) && b[14] === 0x02 && b[15] === 0x54) {
    return 'metadata'; // fd00:ec2::254, the EC2 instance metadata service over IPv6
  }
  if ((b[0]! & 0xfe) === 0xfc) return 'unique-local'; // fc00::/7
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return 'link-local'; // fe80::/10
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0xc0) return 'private'; // fec0::/10, deprecated site-local
  if (b[0] === 0xff) return 'multicast';
  if (
    startsWith(b, [0x20, 0x01, 0x0d, 0xb8]) || // documentation
    (startsWith(b, [0x3f, 0xff]) && b[2]! < 0x10) || // documentation (3fff::/20)
    (startsWith(b, [0x20, 0x01]) && b[2]! < 0x02) || // 2001::/23, IETF protocol assignments
    startsWith(b, [0x01, 0x00, 0, 0, 0, 0, 0, 0]) // discard-only
  )
    return 'reserved';
  // Only global unicast (2000::/3) is public; everything else is unassigned or special.
  if ((b[0]! & 0xe0) !== 0x20) return 'reserved';
  return 'public';
}

/** Classifies an IP address literal (IPv4 dotted quad or IPv6, brackets optional). */
export function classifyAddress(address: string): AddressClass {
  const v4 = parseIPv4(address);
  if (v4) return classifyIPv4(v4);
  const v6 = parseIPv6(address);
  if (v6) return classifyIPv6(v6);
  return 'invalid';
}

/** Whether the service may connect to an address of this class. */
export function isAllowedAddress(cls: AddressClass, allowLoopback: boolean): boolean {
  return cls === 'public' || (allowLoopback && cls === 'loopback');
}
