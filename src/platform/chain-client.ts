import { type Address, createPublicClient, http, type PublicClient } from 'viem';

/** Base mainnet, as every 402 names it (the devnet runs under the same id, at the same address). */
export const BASE_CHAIN_ID = 8453;
export const BASE_NETWORK = 'eip155:8453';
/** Circle's USDC on Base. */
export const BASE_USDC: Address = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

/**
 * A client for the Base JSON-RPC endpoint. It has no chain definition on purpose: viem then
 * verifies ERC-6492 signatures with its deployless validator instead of a verifier contract address
 * that a local chain may not have.
 */
export function baseChainClient(url: string): PublicClient {
  return createPublicClient({ transport: http(url, { timeout: 10_000, retryCount: 1 }) });
}
