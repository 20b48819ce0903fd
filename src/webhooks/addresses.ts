import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where a webhook may be sent. Only public unicast addresses: never loopback, private, link-local,
 * carrier-grade NAT, multicast, reserved or unspecified ones (ipaddr.js's `range()` other than
 * `unicast`), so a subscriber cannot make the server call its own network (SSRF). Checked when a
 * subscription is made, and again at every delivery by the filtering agent at connect time
 * (`send.ts`), because a name may later resolve elsewhere. WEBHOOK_ALLOW_PRIVATE_ADDRESSES turns
 * both off, for a receiver on a developer's own machine.
 */

/** The resolver, in `dns.lookup`'s shape (the filtering agent takes the same); tests hand a stand-in. */
export type HostLookup = typeof dnsLookup;

export const systemLookup: HostLookup = dnsLookup;

export function isPublicAddress(address: string): boolean {
  if (isIP(address) === 0) return false;
  const parsed = ipaddr.process(address);
  return parsed.range() === 'unicast';
}

/** Why `url` may not receive webhooks, or undefined when it may. */
export async function refusedDestination(
  url: URL,
  options: { allowPrivate: boolean; lookup: HostLookup },
): Promise<string | undefined> {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http or https URL';
  if (url.username || url.password) return 'must not carry a user name or password';
  if (options.allowPrivate) return undefined;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const addresses = isIP(host) ? [host] : await resolveAll(host, options.lookup);
  if (addresses === undefined) return `its host ${host} does not resolve`;
  const refused = addresses.find((address) => !isPublicAddress(address));
  return refused === undefined
    ? undefined
    : `its host resolves to ${refused}, a loopback, private, link-local or reserved address; webhooks are sent only to public addresses`;
}

function resolveAll(host: string, lookup: HostLookup): Promise<string[] | undefined> {
  return new Promise((resolve) => {
    lookup(host, { all: true }, (error: NodeJS.ErrnoException | null, found: LookupAddress[]) => {
      resolve(error || found.length === 0 ? undefined : found.map((entry) => entry.address));
    });
  });
}
