import { randomBytes } from 'node:crypto';
import { authorizationTypes } from '@x402/evm';
import { getAddress, type Hex, hashTypedData } from 'viem';
import { describe, expect, it } from 'vitest';
import { authorizationDigest } from '../../src/x402/authorization-digest.js';
import type { Authorization } from '../../src/x402/payment-header.js';

const domain = {
  name: 'USD Coin',
  version: '2',
  chainId: 8453,
  verifyingContract: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
} as const;

const address = () => getAddress(`0x${randomBytes(20).toString('hex')}`);
const MAX = (1n << 256n) - 1n;

describe('the TransferWithAuthorization digest', () => {
  it("is viem's hashTypedData of the same message, whatever its values", () => {
    for (const value of [0n, 1n, 2_000_000n, MAX]) {
      for (const domainOf of [domain, { ...domain, name: 'Other', chainId: 1 }]) {
        const authorization: Authorization = {
          from: address(),
          to: address(),
          value,
          validAfter: value === MAX ? MAX : 0n,
          validBefore: BigInt(Math.floor(Date.now() / 1000) + 300),
          nonce: `0x${randomBytes(32).toString('hex')}` as Hex,
        };
        expect(authorizationDigest(domainOf, authorization)).toBe(
          hashTypedData({
            domain: domainOf,
            types: authorizationTypes,
            primaryType: 'TransferWithAuthorization',
            message: authorization,
          }),
        );
      }
    }
  });

  it('is undefined for a number past uint256, which no one can have signed', () => {
    const authorization: Authorization = {
      from: address(),
      to: address(),
      value: MAX + 1n,
      validAfter: 0n,
      validBefore: 1n,
      nonce: `0x${'00'.repeat(32)}`,
    };
    expect(authorizationDigest(domain, authorization)).toBeUndefined();
  });
});
