import { createPublicClient, http, type PublicClient } from 'viem';

/**
 * A client for the chain's JSON-RPC endpoint (`BASE_RPC_URL`). It has no chain definition on
 * purpose: viem then verifies ERC-6492 signatures with its deployless validator instead of a
 * verifier contract address that a local chain may not have.
 */
export function baseChainClient(url: string): PublicClient {
  return createPublicClient({ transport: http(url, { timeout: 10_000, retryCount: 1 }) });
}
