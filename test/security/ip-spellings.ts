import fc from 'fast-check';

// Arbitraries of IP addresses written every way the WHATWG URL parser (and so the service)
// accepts them: IPv4 in 1 to 4 parts, each part decimal, octal or hex, full-width digits,
// a trailing dot; IPv6 in full, compressed or upper case, and IPv6 forms that embed an IPv4
// address (mapped, translated, compatible, NAT64 well-known and local-use, 6to4, Teredo).

export type Bytes = [number, number, number, number];

const byte = fc.integer({ min: 0, max: 255 });

/** IPv4 addresses in a CIDR block, as 4 bytes. */
export function inBlock(prefix: number[], bits: number): fc.Arbitrary<Bytes> {
  return fc.tuple(byte, byte, byte, byte).map((random) => {
    const out = [0, 0, 0, 0] as Bytes;
    for (let i = 0; i < 4; i++) {
      const keep = Math.max(0, Math.min(8, bits - i * 8));
      const mask = keep === 0 ? 0 : (0xff << (8 - keep)) & 0xff;
      out[i] = ((prefix[i] ?? 0) & mask) | (random[i]! & ~mask & 0xff);
    }
    return out;
  });
}

type Radix = 'dec' | 'oct' | 'hex' | 'HEX';
const radix = fc.constantFrom<Radix>('dec', 'oct', 'hex', 'HEX');
const write = (n: number, r: Radix) =>
  r === 'dec'
    ? String(n)
    : r === 'oct'
      ? `0${n.toString(8)}`
      : r === 'hex'
        ? `0x${n.toString(16)}`
        : `0X${n.toString(16).toUpperCase()}`;
const fullWidth = (s: string) => s.replace(/[0-9]/g, (d) => String.fromCharCode(0xff10 + Number(d)));

/** An IPv4 address as a URL host, in any of the notations the URL parser normalises. */
export function ipv4Spelling(b: Bytes): fc.Arbitrary<string> {
  const [a, c, d, e] = b;
  const value = ((a << 24) | (c << 16) | (d << 8) | e) >>> 0;
  const groups: number[][] = [[value], [a, (c << 16) | (d << 8) | e], [a, c, (d << 8) | e], [a, c, d, e]];
  return fc
    .tuple(fc.constantFrom(...groups), fc.array(radix, { minLength: 4, maxLength: 4 }), fc.boolean(), fc.boolean())
    .map(([parts, radixes, trailingDot, wide]) => {
      const text = parts.map((n, i) => write(n, radixes[i]!)).join('.') + (trailingDot ? '.' : '');
      return wide && !/x/i.test(text) ? fullWidth(text) : text;
    });
}

const hex16 = (hi: number, lo: number) => ((hi << 8) | lo).toString(16);

/** IPv6 hosts that embed the IPv4 address. */
export function embeddedV4Spelling(b: Bytes): fc.Arbitrary<string> {
  const dotted = b.join('.');
  const [w1, w2] = [hex16(b[0], b[1]), hex16(b[2], b[3])];
  // Teredo carries the client's address inverted; NAT64 local use (/48) skips the u-octet.
  const [t1, t2] = [hex16(b[0] ^ 0xff, b[1] ^ 0xff), hex16(b[2] ^ 0xff, b[3] ^ 0xff)];
  return fc
    .constantFrom(
      `::ffff:0:${dotted}`,
      `::ffff:0:${w1}:${w2}`,
      `0:0:0:0:ffff:0:${w1}:${w2}`,
      `64:ff9b:1:${w1}:${hex16(0, b[2])}:${hex16(b[3], 0)}::`,
      `2001:0:4136:e378:8000:63bf:${t1}:${t2}`,
      `2001::${t1}:${t2}`,
      `::ffff:${dotted}`,
      `::ffff:${w1}:${w2}`,
      `0:0:0:0:0:ffff:${w1}:${w2}`,
      `::${dotted}`,
      `64:ff9b::${dotted}`,
      `64:ff9b::${w1}:${w2}`,
      `2002:${w1}:${w2}::`,
      `2002:${w1}:${w2}:0:0:0:0:1`,
    )
    .chain((s) => fc.boolean().map((upper) => `[${upper ? s.toUpperCase() : s}]`));
}

/** An IPv6 address (16 bytes given as 8 groups) as a URL host, compressed or not. */
export function ipv6Spelling(groups: number[]): fc.Arbitrary<string> {
  const full = groups.map((g) => g.toString(16));
  const padded = groups.map((g) => g.toString(16).padStart(4, '0'));
  // Compress the longest run of zero groups.
  let best = { at: -1, len: 0 };
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.len) best = { at: i, len: j - i };
    i = j === i ? i + 1 : j;
  }
  const compressed =
    best.len > 1 ? `${full.slice(0, best.at).join(':')}::${full.slice(best.at + best.len).join(':')}` : full.join(':');
  return fc.constantFrom(full.join(':'), padded.join(':'), compressed, compressed.toUpperCase()).map((s) => `[${s}]`);
}

export const v6In = (prefix: number[], bits: number) =>
  fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }).map((random) => {
    const out = [...random];
    for (let i = 0; i < 8; i++) {
      const keep = Math.max(0, Math.min(16, bits - i * 16));
      const mask = keep === 0 ? 0 : (0xffff << (16 - keep)) & 0xffff;
      out[i] = ((prefix[i] ?? 0) & mask) | (random[i]! & ~mask & 0xffff);
    }
    return out;
  });
