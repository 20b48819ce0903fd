import { createRequire } from 'node:module';

/** Whether the address at `hop` (0: the TCP peer, then X-Forwarded-For from the right) is a trusted proxy. */
type TrustFunction = (address: string, hop: number) => boolean;

// The proxy-addr Fastify itself resolves (a dependency of Fastify's, not of ours): the list is
// compiled exactly as Fastify compiles a `trustProxy` string, so addresses, CIDRs, netmasks, the
// named ranges (`loopback`, `linklocal`, `uniquelocal`) and IPv4-mapped addresses are believed as
// they were before the decisions were remembered.
const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
const proxyAddr = fromFastify('@fastify/proxy-addr') as { compile(list: string[]): TrustFunction };

/**
 * Decisions remembered at most: the peers that connect (one per proxy in a deployment) and the
 * entries of X-Forwarded-For walked through after them. A client chooses the entries and can
 * connect from many addresses, so the memory is cleared when full: it then costs what every
 * request cost before, no more.
 */
const REMEMBERED = 1024;
/** Longer than any address (an IPv6 address with a zone): decided without being remembered. */
const LONGEST_ADDRESS = 64;

/**
 * Fastify's `trustProxy` for `TRUST_PROXY` (src/config.ts): `true` and `false` as they are, a list
 * of proxies as a trust function that remembers its decisions. Fastify's own trust function for a
 * list parses the address with ipaddr.js on every `request.ip`, `ips`, `host` and `protocol` read:
 * about 1 µs for an IPv4 peer and 4 µs for an IPv4-mapped one (as a listener on `::` sees IPv4
 * clients), the whole of what a proxy list cost a public read against `true` (docs/DECISIONS.md,
 * D-177). A deployment's requests come from a few proxies over kept-alive connections, so one
 * lookup of the peer's address answers nearly every request.
 */
export function trustProxyOption(setting: boolean | string): boolean | TrustFunction {
  if (typeof setting === 'boolean') return setting;
  const trusts = proxyAddr.compile(setting.split(',').map((entry) => entry.trim()));
  const decided = new Map<string, boolean>();
  return (address, hop) => {
    const known = decided.get(address);
    if (known !== undefined) return known;
    const trusted = trusts(address, hop);
    // Not every caller hands a string (a request whose socket is gone has no address).
    if (typeof address === 'string' && address.length <= LONGEST_ADDRESS) {
      if (decided.size >= REMEMBERED) decided.clear();
      decided.set(address, trusted);
    }
    return trusted;
  };
}
