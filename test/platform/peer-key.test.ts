import { describe, expect, it } from 'vitest';
import { peerKey } from '../../src/platform/peer-key.js';

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
});
