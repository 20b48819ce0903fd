import * as secp256k1 from 'tiny-secp256k1';
import { type Address, type Hex, hexToBytes, keccak256 } from 'viem';

/**
 * Whether a 65-byte ECDSA signature (r ‖ s ‖ v, v being 27/28 or the bare parity) over `hash`
 * recovers to `address`: the plain-wallet check behind every wallet signature and payment
 * authorization. libsecp256k1 (WebAssembly, through tiny-secp256k1) recovers in about 0.3 ms
 * where viem's pure-JavaScript curve takes about 2 ms, a fifth of a paid purchase's CPU
 * (docs/DECISIONS.md, D-16). Anything malformed is simply not the address's signature; callers that
 * accept smart wallets ask the chain when this says no.
 */
export function recoversTo(hash: Hex, signature: Hex, address: Address): boolean {
  if (signature.length !== 132) return false;
  try {
    const bytes = hexToBytes(signature);
    const v = bytes[64]!;
    const parity = v >= 27 ? v - 27 : v;
    if (parity !== 0 && parity !== 1) return false;
    const publicKey = secp256k1.recover(hexToBytes(hash), bytes.subarray(0, 64), parity, false);
    if (!publicKey) return false;
    return `0x${keccak256(publicKey.subarray(1)).slice(-40)}` === address.toLowerCase();
  } catch {
    // Not hex, r or s out of range, no point for r: not a signature of anyone's.
    return false;
  }
}
