// Which addresses the service may fetch a PDF from (DESIGN §8). A pure classifier over address
// strings, so the rules are unit-tested without any network. Addresses that embed an IPv4
// address (IPv4-mapped, IPv4-compatible, NAT64, 6to4) are classified by the address they embed.

export type AddressClass =
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
export function parseIPv4(text: string): number[] | undefined {
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
    s = s.slice(0, lastColon + 1) + '0:0'; // placeholder groups, replaced below
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

export function classifyIPv4(b: number[]): AddressClass {
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

export function classifyIPv6(b: number[]): AddressClass {
  const zeros = (n: number) => b.slice(0, n).every((v) => v === 0);
  if (zeros(16)) return 'unspecified';
  if (zeros(15) && b[15] === 1) return 'loopback';
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible), 64:ff9b::a.b.c.d (NAT64 well-known prefix)
  if ((zeros(10) && b[10] === 0xff && b[11] === 0xff) || zeros(12) || startsWith(b, [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0])) {
    return classifyIPv4(b.slice(12));
  }
  if (startsWith(b, [0x20, 0x02])) return classifyIPv4(b.slice(2, 6)); // 6to4
  if (startsWith(b, [0xfd, 0x00, 0x0e, 0xc2]) && b.slice(4, 14).every((v) => v === 0) && b[14] === 0x02 && b[15] === 0x54) {
    return 'metadata'; // fd00:ec2::254, the EC2 instance metadata service over IPv6
  }
  if ((b[0]! & 0xfe) === 0xfc) return 'unique-local'; // fc00::/7
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return 'link-local'; // fe80::/10
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0xc0) return 'private'; // fec0::/10, deprecated site-local
  if (b[0] === 0xff) return 'multicast';
  if (
    startsWith(b, [0x20, 0x01, 0x0d, 0xb8]) || // documentation
    startsWith(b, [0x20, 0x01, 0x00, 0x00]) || // Teredo (embeds an obfuscated IPv4 address)
    startsWith(b, [0x01, 0x00, 0, 0, 0, 0, 0, 0]) || // discard-only
    startsWith(b, [0, 0x64, 0xff, 0x9b, 0, 0x01]) // NAT64 local-use
  )
    return 'reserved';
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
