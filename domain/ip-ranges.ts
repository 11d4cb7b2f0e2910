/**
 * Which addresses a webhook may not be sent to unless its host is listed (contract section 12): loopback,
 * private, link-local, the clouds' metadata addresses, and what no one can be reached at (unspecified,
 * multicast, reserved). Pure: the text of an address in, the reason out; the adapter that connects asks it
 * of every address a name resolves to, and connects only to one it passed.
 */

/** IPv4 ranges as [first octets, prefix length, reason]. */
const V4: readonly (readonly [readonly number[], number, string])[] = [
  [[0], 8, 'unspecified'],
  [[10], 8, 'private'],
  [[100, 64], 10, 'private (shared address space)'],
  [[127], 8, 'loopback'],
  [[169, 254], 16, 'link-local (and cloud metadata)'],
  [[172, 16], 12, 'private'],
  [[192, 0, 0], 24, 'reserved'],
  [[192, 168], 16, 'private'],
  [[198, 18], 15, 'reserved'],
  [[224], 4, 'multicast'],
  [[240], 4, 'reserved'],
  // Azure's wire server and instance metadata: a public address that answers only inside the cloud.
  [[168, 63, 129, 16], 32, 'cloud metadata'],
];

/** Parses a dotted-quad IPv4 address into its 32 bits; null when it is not one. */
export function parseIpv4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || (part.length > 1 && part.startsWith('0'))) return null;
    const octet = Number(part);
    if (octet > 255) return null;
    value = value * 256 + octet;
  }
  return value;
}

/** Parses an IPv6 address (`::` shortening, a dotted quad at its end, a `%zone` dropped) into its eight groups; null when it is not one. */
export function parseIpv6(text: string): number[] | null {
  let body = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = body.indexOf('%');
  if (zone !== -1) body = body.slice(0, zone);
  if (body === '' || !/^[0-9A-Fa-f:.]+$/.test(body)) return null;
  const halves = body.split('::');
  if (halves.length > 2) return null;
  const groupsOf = (part: string): number[] | null => {
    if (part === '') return [];
    const out: number[] = [];
    const pieces = part.split(':');
    for (let i = 0; i < pieces.length; i += 1) {
      const piece = pieces[i]!;
      if (i === pieces.length - 1 && piece.includes('.')) {
        const v4 = parseIpv4(piece);
        if (v4 === null) return null;
        out.push(Math.floor(v4 / 65536), v4 % 65536);
      } else {
        if (!/^[0-9A-Fa-f]{1,4}$/.test(piece)) return null;
        out.push(parseInt(piece, 16));
      }
    }
    return out;
  };
  const head = groupsOf(halves[0]!);
  const tail = halves.length === 2 ? groupsOf(halves[1]!) : [];
  if (head === null || tail === null) return null;
  if (halves.length === 1) return head.length === 8 ? head : null;
  const missing = 8 - head.length - tail.length;
  if (missing < 1) return null;
  return [...head, ...Array<number>(missing).fill(0), ...tail];
}

function v4Reason(value: number): string | null {
  for (const [octets, prefix, reason] of V4) {
    let base = 0;
    for (let i = 0; i < 4; i += 1) base = base * 256 + (octets[i] ?? 0);
    const size = 2 ** (32 - prefix);
    if (Math.floor(value / size) === Math.floor(base / size)) return reason;
  }
  return value === 0xffffffff ? 'broadcast' : null;
}

function v6Reason(g: readonly number[]): string | null {
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  const embedded = (hi: number, lo: number) => v4Reason(g[hi]! * 65536 + g[lo]!);
  if (zeros(0, 8)) return 'unspecified';
  if (zeros(0, 7) && g[7] === 1) return 'loopback';
  // An IPv4 address written as IPv6 (mapped, compatible, NAT64, 6to4) reaches that IPv4 address: judged as it.
  if (zeros(0, 5) && g[5] === 0xffff) return embedded(6, 7);
  if (zeros(0, 6)) return embedded(6, 7);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return embedded(6, 7);
  if (g[0] === 0x2002) return embedded(1, 2);
  const first = g[0]!;
  // fc00::/7 holds AWS's metadata address fd00:ec2::254.
  if ((first & 0xfe00) === 0xfc00) return 'private (unique local)';
  if ((first & 0xffc0) === 0xfe80) return 'link-local';
  if ((first & 0xffc0) === 0xfec0) return 'private (site-local)';
  if ((first & 0xff00) === 0xff00) return 'multicast';
  return null;
}

/**
 * Why a webhook may not be sent to `address` (an IPv4 or IPv6 address's text): its range (`loopback`,
 * `private`, `link-local (and cloud metadata)`, ...), or `not an address`; null when it may.
 */
export function blockedAddress(address: string): string | null {
  const v4 = parseIpv4(address);
  if (v4 !== null) return v4Reason(v4);
  const v6 = parseIpv6(address);
  if (v6 !== null) return v6Reason(v6);
  return 'not an address';
}

/** Whether `text` is an IP address (a URL's host written as one), bracketed or not. */
export const isIpAddress = (text: string): boolean => parseIpv4(text) !== null || parseIpv6(text) !== null;
