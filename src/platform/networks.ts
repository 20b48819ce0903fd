import type { Address } from 'viem';

/**
 * Where payments are made: one chain, Circle's USDC on it and its explorer. The configured one
 * (`PAYMENTS_MODE`) flows from `config.payments.network` to everything that names it: the 402's
 * `accepts[].network`, the EIP-712 chain id payments are checked under, the wallet-ownership
 * challenges, the explorer links, the browser checkout's chain switch and the texts agents read.
 * Plain data, so configuration loads without viem (`viemChain` in chain-client.ts builds its chain).
 */
export interface PaymentNetwork {
  /** Its everyday name, as texts and wallets say it. */
  name: string;
  chainId: number;
  /** CAIP-2, as a 402's `accepts[].network` names it. */
  caip2: `eip155:${number}`;
  /** Circle's USDC there. */
  usdc: Address;
  /** Its explorer's page of a transaction, `{tx}` standing for the hash. */
  explorerTxUrl: string;
  /**
   * A public JSON-RPC endpoint and the explorer, as a wallet that does not know the chain is asked
   * to add it (EIP-3085): the wallet reads its balances there, this service never does.
   */
  walletRpcUrl: string;
  explorerUrl: string;
  /** Test money only (faucets, no value). */
  testnet: boolean;
}

/** Base mainnet; the devnet impersonates it (chain id and token address). */
export const BASE: PaymentNetwork = {
  name: 'Base',
  chainId: 8453,
  caip2: 'eip155:8453',
  usdc: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  explorerTxUrl: 'https://basescan.org/tx/{tx}',
  walletRpcUrl: 'https://mainnet.base.org',
  explorerUrl: 'https://basescan.org',
  testnet: false,
};

/** Base Sepolia, Base's public testnet, with Circle's test USDC (https://faucet.circle.com). */
export const BASE_SEPOLIA: PaymentNetwork = {
  name: 'Base Sepolia',
  chainId: 84532,
  caip2: 'eip155:84532',
  usdc: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  explorerTxUrl: 'https://sepolia.basescan.org/tx/{tx}',
  walletRpcUrl: 'https://sepolia.base.org',
  explorerUrl: 'https://sepolia.basescan.org',
  testnet: true,
};

export const PAYMENT_NETWORKS: readonly PaymentNetwork[] = [BASE, BASE_SEPOLIA];
