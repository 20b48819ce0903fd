/**
 * What a per-client limit counts, for the SSH connection caps and the HTTP rate limits alike: an
 * IPv4 address itself, an IPv6 address by its /64 (one subscriber's usual allocation, which a single
 * client can otherwise rotate through freely).
 */
export function peerKey(address: string): string {
  const ipv4 = /^(?:::ffff:)?(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (ipv4) return ipv4[1]!;
  const [head = '', tail] = address.split('%')[0]!.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  // An embedded IPv4 address at the end fills two groups.
  const rightGroups = right.length + (right.at(-1)?.includes('.') ? 1 : 0);
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - rightGroups)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(':')}::/64`;
}
