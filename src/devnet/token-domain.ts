import { type Hex, numberToHex } from 'viem';

/**
 * The devnet token's EIP-712 domain. The devnet impersonates Base (chain id 8453, the token at the
 * real Base USDC address), so with real USDC's domain ("USD Coin", "2") a transfer authorization
 * signed for a devnet 402 would also be a valid authorization on Base: a person trying a devnet
 * server with an everyday wallet would sign away real USDC. A different name makes every devnet
 * signature worthless on Base. The 402 announces it in `extra.name`, from which x402 clients sign.
 */
export const DEVNET_TOKEN_DOMAIN = { name: 'USD Coin (repo402 devnet)', version: '2' } as const;

/** DevUSDC's storage slot for its name (contracts/DevUSDC.sol). */
export const TOKEN_NAME_SLOT = numberToHex(5, { size: 32 });

/**
 * A Solidity `string` under 32 bytes as its storage slot holds it: the bytes left-aligned, the
 * lowest byte twice the length.
 */
export function shortStringSlotValue(text: string): Hex {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length >= 32) throw new Error(`a short string is under 32 bytes: ${text}`);
  const value = Buffer.alloc(32);
  value.set(bytes);
  value[31] = bytes.length * 2;
  return `0x${value.toString('hex')}`;
}
