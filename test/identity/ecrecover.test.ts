import { type Hex, hashMessage, keccak256, recoverMessageAddress, toHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { recoversTo } from '../../src/identity/ecrecover.js';

const account = privateKeyToAccount(generatePrivateKey());
const other = privateKeyToAccount(generatePrivateKey());

/** The signature with its last byte (v) replaced. */
const withV = (signature: Hex, v: number): Hex =>
  `${signature.slice(0, 130)}${toHex(v, { size: 1 }).slice(2)}` as Hex;

describe('recoversTo', () => {
  it('agrees with viem on signatures from many keys', async () => {
    for (let i = 0; i < 20; i++) {
      const signer = privateKeyToAccount(generatePrivateKey());
      const message = `challenge ${i}`;
      const signature = await signer.signMessage({ message });
      expect(await recoverMessageAddress({ message, signature })).toBe(signer.address);
      expect(recoversTo(hashMessage(message), signature, signer.address)).toBe(true);
      expect(recoversTo(hashMessage(message), signature, signer.address.toLowerCase() as Hex)).toBe(true);
      expect(recoversTo(hashMessage(message), signature, other.address)).toBe(false);
    }
  });

  it('takes v as 27/28 or as the bare parity 0/1', async () => {
    const hash = keccak256('0x1234');
    const signature = await account.sign({ hash });
    const v = Number.parseInt(signature.slice(130), 16);
    expect([27, 28]).toContain(v);
    expect(recoversTo(hash, withV(signature, v - 27), account.address)).toBe(true);
    // The other parity recovers some other key, never the signer's.
    expect(recoversTo(hash, withV(signature, v === 27 ? 28 : 27), account.address)).toBe(false);
  });

  it('says no to a changed hash and to anything that is not a 65-byte signature', async () => {
    const hash = keccak256('0x1234');
    const signature = await account.sign({ hash });
    expect(recoversTo(keccak256('0x1235'), signature, account.address)).toBe(false);
    for (const bad of [
      signature.slice(0, 130), // 64 bytes, no v
      `${signature}00`, // 66 bytes
      withV(signature, 29),
      `0x${'00'.repeat(64)}1b`, // r = s = 0
      `0x${'ff'.repeat(64)}1b`, // r and s above the curve order
      `0x${'zz'.repeat(64)}1b`, // not hex
    ]) {
      expect(recoversTo(hash, bad as Hex, account.address), bad).toBe(false);
    }
  });
});
