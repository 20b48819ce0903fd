import {
  type Address,
  createPublicClient,
  createWalletClient,
  custom,
  type EIP1193RequestFn,
  type Hex,
  numberToHex,
  type PublicClient,
  pad,
  type WalletClient,
} from 'viem';
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { createNonceManager, jsonRpc } from 'viem/nonce';
import type { Db } from '../db/connect.js';
import { MULTICALL3_ADDRESS, viemChain } from '../platform/chain-client.js';
import { BASE, type PaymentNetwork } from '../platform/networks.js';
import { startEdrProvider } from './edr.js';
import { DevUSDC, Multicall3 } from './generated/contract-artifacts.js';
import { appendJournal, readJournal } from './journal-store.js';
import { DEVNET_TOKEN_DOMAIN, shortStringSlotValue, TOKEN_NAME_SLOT } from './token-domain.js';

/**
 * The devnet chain (DESIGN.md, "local chain"): Hardhat's EDR in this process with Base's chain id
 * 8453, the EIP-3009 token at the real Base USDC address and Multicall3 at its canonical address,
 * so 402 bodies are those of Base mainnet; only the token's EIP-712 name differs (token-domain.ts),
 * so that no signature made for the devnet is worth anything on Base. Every transaction goes
 * through a write-ahead journal in the database, replayed at start with the same block
 * timestamps: the chain survives restarts exactly as it was. Tests also start it as another
 * network (Base Sepolia's chain id and USDC address) to stand in for that network.
 */

/** Fixed, so every start builds the same genesis and journal timestamps always follow it. */
const GENESIS_TIME = 1_704_067_200; // 2024-01-01T00:00:00Z
/** Storage slot of DevUSDC's minter (see contracts/DevUSDC.sol). */
const MINTER_SLOT = numberToHex(4, { size: 32 });
/** The ether `fundGas` tops an address up to: thousands of payout sweeps at the devnet's gas price. */
export const DEVNET_GAS_ALLOWANCE_WEI = 10n ** 18n;

export interface DevnetChain {
  /** The network it runs as: Base unless a test stands it in for another. */
  network: PaymentNetwork;
  publicClient: PublicClient;
  /** Pays gas for settlements, receives payments (payTo), mints test USDC and pays creators. */
  platform: PrivateKeyAccount;
  walletClient: WalletClient;
  asset: Address;
  /** The EIP-1193 request function, for clients built elsewhere (tests, the facilitator). */
  request: EIP1193RequestFn;
  /** Mints test USDC to `to`; resolves to the mined transaction's hash. */
  fund(to: Address, amountMicro: bigint): Promise<Hex>;
  /**
   * Tops `to`'s ether up to DEVNET_GAS_ALLOWANCE_WEI with a transfer from the platform wallet (a
   * journalled transaction, so it survives restarts): the mined transaction's hash, or undefined
   * when it already held that much.
   */
  fundGas(to: Address): Promise<Hex | undefined>;
  balanceOf(address: Address): Promise<bigint>;
  /** Once nothing will ask it again (its process's context is closing): every later request fails. */
  close(): Promise<void>;
  /** How many journalled transactions were replayed at start. */
  replayed: number;
}

export interface DevnetOptions {
  db: Db;
  platformKey: Hex;
  now?: () => Date;
  /**
   * The token's EIP-712 domain name; the devnet's own unless a test makes a stand-in for real Base
   * (real USDC's "USD Coin"), which a devnet must never be.
   */
  tokenName?: string;
  /** The chain id and token address it takes; Base's unless a test stands in for another network. */
  network?: PaymentNetwork;
}

export async function startDevnetChain(options: DevnetOptions): Promise<DevnetChain> {
  const now = options.now ?? (() => new Date());
  const network = options.network ?? BASE;
  const asset = network.usdc;
  const chain = viemChain(network, `${network.name} (repo402 devnet)`);
  // A nonce manager of this chain's own: viem's default one is shared by every chain in the process.
  const platform = privateKeyToAccount(options.platformKey, {
    nonceManager: createNonceManager({ source: jsonRpc() }),
  });
  const provider = await startEdrProvider({
    chainId: network.chainId,
    genesisTime: GENESIS_TIME,
    funded: [{ address: platform.address, balanceWei: 10n ** 27n }],
  });
  const edr = provider.request;
  await edr({ method: 'hardhat_setCode', params: [asset, DevUSDC.deployedBytecode] } as never);
  await edr({
    method: 'hardhat_setCode',
    params: [MULTICALL3_ADDRESS, Multicall3.deployedBytecode],
  } as never);
  await edr({
    method: 'hardhat_setStorageAt',
    params: [asset, MINTER_SLOT, pad(platform.address, { size: 32 })],
  } as never);

  let tokenName: string | undefined;
  const nameToken = async (name: string) => {
    if (name === tokenName) return;
    await edr({
      method: 'hardhat_setStorageAt',
      params: [asset, TOKEN_NAME_SLOT, shortStringSlotValue(name)],
    } as never);
    tokenName = name;
  };

  const journal = await readJournal(options.db);
  let lastTimestamp = GENESIS_TIME;
  for (const entry of journal) {
    // Each under the name it was sent under: journals older than the devnet's own name replay too.
    await nameToken(entry.tokenName);
    await edr({ method: 'evm_setNextBlockTimestamp', params: [numberToHex(entry.blockTimestamp)] } as never);
    // A transaction the chain refused when it was first sent is refused again: same outcome.
    await edr({ method: 'eth_sendRawTransaction', params: [entry.raw] } as never).catch(() => {});
    lastTimestamp = entry.blockTimestamp;
  }
  const currentName = options.tokenName ?? DEVNET_TOKEN_DOMAIN.name;
  await nameToken(currentName);

  // Transactions are journalled, then mined, one at a time, so the journal order is the chain order.
  let queue: Promise<unknown> = Promise.resolve();
  const sendRaw = (raw: Hex): Promise<unknown> => {
    const run = queue.then(async () => {
      const blockTimestamp = Math.max(lastTimestamp, Math.floor(now().getTime() / 1000));
      await appendJournal(options.db, { blockTimestamp, raw, tokenName: currentName }, now());
      lastTimestamp = blockTimestamp;
      await edr({ method: 'evm_setNextBlockTimestamp', params: [numberToHex(blockTimestamp)] } as never);
      return edr({ method: 'eth_sendRawTransaction', params: [raw] } as never);
    });
    queue = run.catch(() => {});
    return run;
  };
  const request = (async (args: { method: string; params?: unknown }) => {
    if (args.method === 'eth_sendRawTransaction') return sendRaw((args.params as [Hex])[0]);
    if (args.method === 'eth_sendTransaction') {
      throw new Error('the devnet signs transactions locally; eth_sendTransaction is not journalled');
    }
    return edr(args as never);
  }) as EIP1193RequestFn;

  const transport = custom({ request }, { retryCount: 0 });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 50 });
  const walletClient = createWalletClient({ account: platform, chain, transport });

  const mined = async (hash: Hex, what: string) => {
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 10 });
    if (receipt.status !== 'success') throw new Error(`devnet ${what} reverted: ${hash}`);
    return hash;
  };
  const mint = async (to: Address, amount: bigint) => {
    const hash = await walletClient.writeContract({
      account: platform,
      chain,
      address: asset,
      abi: DevUSDC.abi,
      functionName: 'mint',
      args: [to, amount],
    });
    return mined(hash, 'mint');
  };
  const fundGas = async (to: Address) => {
    const held = await publicClient.getBalance({ address: to });
    if (held >= DEVNET_GAS_ALLOWANCE_WEI) return undefined;
    const hash = await walletClient.sendTransaction({
      account: platform,
      chain,
      to,
      value: DEVNET_GAS_ALLOWANCE_WEI - held,
    });
    return mined(hash, 'gas transfer');
  };

  return {
    network,
    publicClient: publicClient as PublicClient,
    platform,
    walletClient,
    asset,
    request,
    fund: mint,
    fundGas,
    balanceOf: (address) =>
      publicClient.readContract({
        address: asset,
        abi: DevUSDC.abi,
        functionName: 'balanceOf',
        args: [address],
      }),
    replayed: journal.length,
    async close() {
      await queue;
      await provider.release();
    },
  };
}
