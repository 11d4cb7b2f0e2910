import { isIPv6 } from 'node:net';

/**
 * The key a client is counted by in a per-client limit: an IPv4 address as it is; an IPv6 address
 * by its /64 (one subscriber commonly holds a whole /64, so counting single addresses would give
 * it 2^64 budgets); an IPv4-mapped IPv6 address as the IPv4 address it carries. Anything else (a
 * proxy's odd entry, `unknown`) is its own key.
 */
export function clientKey(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped !== null) return mapped[1]!;
  // A zone (`fe80::1%eth0`) names the interface, not the host.
  const bare = address.split('%')[0]!;
  if (!isIPv6(bare)) return address;
  return `${firstGroups(bare.toLowerCase()).join(':')}::/64`;
}

/** The first four 16-bit groups of an IPv6 address, `::` expanded, leading zeros dropped. */
function firstGroups(address: string): string[] {
  const [head, tail] = address.split('::') as [string, string | undefined];
  const front = head === '' ? [] : head.split(':');
  // An embedded IPv4 tail (`::ffff:1.2.3.4`, `64:ff9b::1.2.3.4`) only fills the last groups: never the first four.
  const groups = tail === undefined ? front : [...front, ...Array<string>(Math.max(0, 8 - front.length - tail.split(':').length)).fill('0')];
  return groups.slice(0, 4).map((group) => parseInt(group, 16).toString(16));
}
