import { createHmac } from 'node:crypto';
import type { FacilitatorClient } from '@x402/core/http';
import {
  type Address,
  createWalletClient,
  custom,
  getAddress,
  type Hex,
  isAddressEqual,
  type PublicClient,
  parseAbi,
} from 'viem';
import { ConfigError, type PaymentsConfig, type PaymentsMode } from '../config.js';
import type { Database } from '../db/connect.js';
import type { DevnetChain } from '../devnet/chain.js';
import { DEVNET_TOKEN_DOMAIN } from '../devnet/token-domain.js';
import { viemChain } from '../platform/chain-client.js';
import type { PaymentNetwork } from '../platform/networks.js';
import { httpFacilitator } from './facilitator-client.js';
import { chainPayouts, type PayoutTransfers } from './payout-transfers.js';

/**
 * Where payments go and who settles them: the one object that differs between devnet, testnet and
 * mainnet. Everything else (quotes, 402 bodies, verification, settlement, ledger) is the same.
 */
export interface PaymentRail {
  mode: PaymentsMode;
  /** The chain paid on: its CAIP-2 id is the 402's `accepts[].network`, its chain id the EIP-712 domain's. */
  network: PaymentNetwork;
  asset: Address;
  /** The platform's receiving address (`payTo`). */
  payTo: Address;
  /** The token's EIP-712 domain, as in `accepts[].extra`. */
  tokenDomain: { name: string; version: string };
  /** verify / settle / supported; the in-process devnet facilitator or an HTTP one. Tests may swap it. */
  facilitator: FacilitatorClient;
  /**
   * Reads the chain (authorizationState, logs) to decide payments whose settle answer was lost:
   * the devnet, or BASE_RPC_URL (required on mainnet and testnet).
   */
  reader: PublicClient;
  /** The devnet chain, in devnet mode. */
  devnet?: DevnetChain;
  /** Payouts from the platform wallet; absent when this deployment cannot sign payouts. */
  payouts?: PayoutTransfers;
}

const EIP712_NAMING = parseAbi([
  'function name() view returns (string)',
  'function version() view returns (string)',
]);

/**
 * The token's EIP-712 domain as its contract states it, which the 402 announces and buyers sign
 * under: real USDC's on Base, but a `repo402 devnet serve` chain standing in for Base answers its
 * own, so that no signature made for it is valid on Base (D-123).
 */
async function tokenDomainOf(
  client: PublicClient,
  asset: Address,
): Promise<{ name: string; version: string }> {
  const [name, version] = await Promise.all([
    client.readContract({ address: asset, abi: EIP712_NAMING, functionName: 'name' }),
    client.readContract({ address: asset, abi: EIP712_NAMING, functionName: 'version' }),
  ]);
  return { name, version };
}

/** The devnet platform key, derived from the installation secret so it (and the journal) survive restarts. */
export function devnetPlatformKey(appSecret: Buffer): Hex {
  return `0x${createHmac('sha256', appSecret).update('repo402/devnet/platform-key').digest('hex')}`;
}

export interface RailDeps {
  database: Database;
  appSecret: Buffer;
  /** BASE_RPC_URL's client, for mainnet reconciliation. */
  baseClient?: PublicClient;
}

export async function openPaymentRail(config: PaymentsConfig, deps: RailDeps): Promise<PaymentRail> {
  const { network } = config;
  if (config.mode !== 'devnet') {
    if (!deps.baseClient) throw new ConfigError([`BASE_RPC_URL: required when PAYMENTS_MODE=${config.mode}`]);
    await assertChainOf(deps.baseClient, network, config.mode);
    const asset = getAddress(config.usdcContract);
    return {
      mode: config.mode,
      network,
      asset,
      payTo: getAddress(config.platformPayoutAddress!),
      tokenDomain: await tokenDomainOf(deps.baseClient, asset),
      facilitator: await httpFacilitator(config),
      reader: deps.baseClient,
      payouts: config.payoutPrivateKey
        ? await externalPayouts(config, config.payoutPrivateKey, deps.baseClient)
        : undefined,
    };
  }
  const { startDevnetChain } = await import('../devnet/chain.js');
  const { devnetFacilitator } = await import('../devnet/facilitator.js');
  const devnet = await startDevnetChain({
    db: deps.database.db,
    platformKey: devnetPlatformKey(deps.appSecret),
    network,
  });
  return {
    mode: 'devnet',
    network,
    asset: devnet.asset,
    payTo: devnet.platform.address,
    tokenDomain: DEVNET_TOKEN_DOMAIN,
    facilitator: config.facilitatorUrl ? await httpFacilitator(config) : devnetFacilitator(devnet),
    reader: devnet.publicClient,
    devnet,
    payouts: chainPayouts({
      publicClient: devnet.publicClient,
      walletClient: devnet.walletClient,
      account: devnet.platform,
      asset: devnet.asset,
    }),
  };
}

/**
 * BASE_RPC_URL must be a node of the chain paid on: a mainnet endpoint under a testnet setting (or
 * the reverse) would check signatures and decide lost settlements on the wrong chain.
 */
async function assertChainOf(
  client: PublicClient,
  network: PaymentNetwork,
  mode: PaymentsMode,
): Promise<void> {
  const chainId = await client.getChainId();
  if (chainId !== network.chainId) {
    throw new ConfigError([
      `BASE_RPC_URL: its chain id is ${chainId}, but PAYMENTS_MODE=${mode} pays on ${network.name} (chain id ${network.chainId})`,
    ]);
  }
}

/**
 * Payouts on the chain paid on, signed here with PAYOUT_PRIVATE_KEY and sent through BASE_RPC_URL.
 * They are paid from the address buyers pay, so the key must be that address's.
 */
async function externalPayouts(
  config: PaymentsConfig,
  key: Hex,
  publicClient: PublicClient,
): Promise<PayoutTransfers> {
  const { privateKeyToAccount } = await import('viem/accounts');
  const { createNonceManager, jsonRpc } = await import('viem/nonce');
  const account = privateKeyToAccount(key, { nonceManager: createNonceManager({ source: jsonRpc() }) });
  if (!isAddressEqual(account.address, config.platformPayoutAddress!)) {
    throw new ConfigError([
      `PAYOUT_PRIVATE_KEY: its address ${account.address} is not PLATFORM_PAYOUT_ADDRESS ${config.platformPayoutAddress}`,
    ]);
  }
  const walletClient = createWalletClient({
    account,
    chain: viemChain(config.network),
    transport: custom(publicClient),
  });
  return chainPayouts({ publicClient, walletClient, account, asset: getAddress(config.usdcContract) });
}
