import {
  type Address,
  type Chain,
  createPublicClient,
  defineChain,
  http,
  type PublicClient,
  type Transport,
} from 'viem';
import type { PaymentNetwork } from './networks.js';

/**
 * A client for the chain's JSON-RPC endpoint (`BASE_RPC_URL`). It has no chain definition on
 * purpose: viem then verifies ERC-6492 signatures with its deployless validator instead of a
 * verifier contract address that a local chain may not have.
 */
export function baseChainClient(url: string): PublicClient {
  return createPublicClient({
    transport: withoutUrlInErrors(http(url, { timeout: 10_000, retryCount: 1 }), url),
  });
}

/** The endpoint as errors may show it: providers put their API key in the path, query or user part. */
export function shownRpcUrl(url: string): string {
  const { protocol, host } = new URL(url);
  return `${protocol}//${host}/…`;
}

/**
 * `transport`, whose errors name the endpoint without its key: viem writes the full URL into a
 * request error's message, stack and fields, which reach the log and the terminal. The error keeps
 * its class, so viem still maps RPC errors to what they mean.
 */
function withoutUrlInErrors(transport: Transport, url: string): Transport {
  const shown = shownRpcUrl(url);
  const { protocol, host } = new URL(url);
  // The endpoint as written, or as viem shows it (credentials moved to a header), to the next space.
  const written = new RegExp(`${escaped(protocol)}//([^@\\s/]*@)?${escaped(host)}[^\\s"]*`, 'g');
  const scrub = (text: unknown) => (typeof text === 'string' ? text.replace(written, shown) : text);
  return (params) => {
    const opened = transport(params);
    const request: typeof opened.request = async (args, options) => {
      try {
        return await opened.request(args, options);
      } catch (error) {
        if (error && typeof error === 'object') {
          const fields = error as Record<string, unknown>;
          for (const key of ['message', 'stack', 'details', 'shortMessage', 'url']) {
            if (key in fields) fields[key] = scrub(fields[key]);
          }
          if (Array.isArray(fields.metaMessages)) fields.metaMessages = fields.metaMessages.map(scrub);
        }
        throw error;
      }
    };
    return { ...opened, request };
  };
}

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Multicall3 at its canonical address, deployed on Base and Base Sepolia alike (and on the devnet). */
export const MULTICALL3_ADDRESS: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';

/** The network as viem signs for it: its chain id (checked against the node's) and Multicall3. */
export function viemChain(network: PaymentNetwork, name = network.name): Chain {
  return defineChain({
    id: network.chainId,
    name,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [] } },
    contracts: { multicall3: { address: MULTICALL3_ADDRESS } },
  });
}
