import { describe, expect, it } from 'vitest';
import { peerBlock, peerKey } from '../../src/platform/limits/peer-key.js';

describe('the client a per-client limit counts', () => {
  it('is the IPv4 address itself, and the /64 of an IPv6 address', () => {
    expect(peerKey('203.0.113.7')).toBe('203.0.113.7');
    expect(peerKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(peerKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(peerKey('2001:db8:1:2::9')).toBe('2001:db8:1:2::/64');
    expect(peerKey('2001:DB8:0001:0002:ffff::1')).toBe('2001:db8:1:2::/64');
    expect(peerKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(peerKey('::1')).toBe('0:0:0:0::/64');
    expect(peerKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  });

  it('reads an IPv4 client written as an IPv6 address as its IPv4 address', () => {
    expect(peerKey('0:0:0:0:0:ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(peerKey('::ffff:cb00:7107')).toBe('203.0.113.7');
    expect(peerKey('::FFFF:CB00:7107')).toBe('203.0.113.7');
  });

  it('leaves out the port and brackets some proxies forward, and counts what is not an address as it is', () => {
    // With its source port in the key, every new connection would be a new client.
    expect(peerKey('203.0.113.7:51234')).toBe('203.0.113.7');
    expect(peerKey('[2001:db8::1]')).toBe('2001:db8:0:0::/64');
    expect(peerKey('[2001:db8::1]:443')).toBe('2001:db8:0:0::/64');
    expect(peerKey('not an address')).toBe('not an address');
    expect(peerKey('[not an address]:1')).toBe('[not an address]:1');
    // Node gives no address for a request whose socket is already gone.
    expect(peerKey(undefined)).toBe('unknown');
  });
});

describe('the address block a per-block cap counts', () => {
  it('is the /24 of an IPv4 address and the /48 of an IPv6 address, however written', () => {
    expect(peerBlock('203.0.113.7')).toBe('203.0.113.0/24');
    expect(peerBlock('::ffff:203.0.113.200')).toBe('203.0.113.0/24');
    expect(peerBlock('203.0.114.7')).toBe('203.0.114.0/24');
    expect(peerBlock('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1::/48');
    expect(peerBlock('2001:db8:1:ffff::1')).toBe('2001:db8:1::/48');
    expect(peerBlock('2001:db8::1')).toBe('2001:db8:0::/48');
    expect(peerBlock('[2001:db8:2::1]:22')).toBe('2001:db8:2::/48');
    expect(peerBlock('not an address')).toBe('not an address');
    expect(peerBlock(undefined)).toBe('unknown');
  });
});
