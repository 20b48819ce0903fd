import { isIPv6 } from 'node:net';

const IPV4 = /^(?:::ffff:)?(\d{1,3}(?:\.\d{1,3}){3})(?::\d+)?$/i;
/** `[2001:db8::1]` or `[2001:db8::1]:443`, as some proxies forward an IPv6 client. */
const BRACKETED = /^\[([^\]]+)\](?::\d+)?$/;

/**
 * What a per-client limit counts, for the SSH connection caps and the HTTP rate limits alike: an
 * IPv4 address itself, an IPv6 address by its /64 (one subscriber's usual allocation, which a single
 * client can otherwise rotate through freely). An IPv4 client written as an IPv6 address (mapped,
 * in any notation) is its IPv4 address.
 */
export function peerKey(address: string | undefined): string {
  // Node has no address for a request whose socket is already gone; it must not fail the request.
  if (address === undefined) return 'unknown';
  // Some proxies forward the client with its source port: the port is not part of the client.
  const ipv4 = IPV4.exec(address);
  if (ipv4) return ipv4[1]!;
  const ipv6 = (BRACKETED.exec(address)?.[1] ?? address).split('%')[0]!.toLowerCase();
  // Not an address at all: counted as it is, rather than folded into a /64 it does not name.
  if (!isIPv6(ipv6)) return address;
  const groups = ipv6Groups(ipv6);
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (an embedded IPv4 address fills the last two). */
function ipv6Groups(address: string): number[] {
  const groupsOf = (text: string) =>
    text
      ? text.split(':').flatMap((part) => {
          if (!part.includes('.')) return [Number.parseInt(part, 16)];
          const [a = 0, b = 0, c = 0, d = 0] = part.split('.').map(Number);
          return [(a << 8) | b, (c << 8) | d];
        })
      : [];
  const [head = '', tail = ''] = address.split('::');
  const left = groupsOf(head);
  const right = groupsOf(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

const IPV4_KEY = /^(\d{1,3}\.\d{1,3}\.\d{1,3})\.\d{1,3}$/;
const IPV6_KEY = /^([0-9a-f]+:[0-9a-f]+:[0-9a-f]+):[0-9a-f]+::\/64$/;

/**
 * The address block around a client, for caps a flood from many neighbouring addresses must not
 * get around: an IPv4 /24, an IPv6 /48 (a site's usual allocation). What is not an address is its
 * own block.
 */
export function peerBlock(address: string | undefined): string {
  const key = peerKey(address);
  const ipv4 = IPV4_KEY.exec(key);
  if (ipv4) return `${ipv4[1]}.0/24`;
  const ipv6 = IPV6_KEY.exec(key);
  return ipv6 ? `${ipv6[1]}::/48` : key;
}
