import { type Address, domainSeparator, type Hex, keccak256, toHex } from 'viem';
import type { Authorization } from './payment-header.js';

/**
 * The EIP-712 digest of an EIP-3009 `TransferWithAuthorization`, the message a payer signs and
 * the token checks: equal to viem's `hashTypedData` over `authorizationTypes` (a test compares
 * them), with the type hash and the domain separator computed once. `hashTypedData` validated
 * and hashed the whole type description and domain on every call, and checked each address's
 * checksum with another hash: five times the Keccak work, about 5 % of a paid purchase's CPU
 * (docs/DECISIONS.md, D-76).
 */

export interface TokenDomain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: Address;
}

const TYPE_HASH = keccak256(
  toHex(
    'TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)',
  ),
);
const UINT256_LIMIT = 1n << 256n;

const separators = new Map<string, Hex>();

function separatorOf(domain: TokenDomain): Hex {
  const key = `${domain.name}\n${domain.version}\n${domain.chainId}\n${domain.verifyingContract.toLowerCase()}`;
  let separator = separators.get(key);
  if (!separator) {
    separator = domainSeparator({ domain });
    separators.set(key, separator);
  }
  return separator;
}

/** The digest; undefined when the authorization cannot be EIP-712 data (a number past uint256). */
export function authorizationDigest(domain: TokenDomain, authorization: Authorization): Hex | undefined {
  const words = [authorization.value, authorization.validAfter, authorization.validBefore];
  if (words.some((word) => word < 0n || word >= UINT256_LIMIT)) return undefined;
  const struct = keccak256(
    `${TYPE_HASH}${word(authorization.from)}${word(authorization.to)}${words.map(uint256).join('')}${authorization.nonce.slice(2)}`,
  );
  return keccak256(`0x1901${separatorOf(domain).slice(2)}${struct.slice(2)}`);
}

/** An address as an ABI word: 12 zero bytes, then its 20. */
function word(address: Address): string {
  return address.slice(2).toLowerCase().padStart(64, '0');
}

function uint256(value: bigint): string {
  return value.toString(16).padStart(64, '0');
}
