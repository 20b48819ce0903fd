import {
  type Address,
  decodeFunctionData,
  type Hex,
  isAddressEqual,
  type Log,
  type PublicClient,
  parseAbiItem,
  parseEventLogs,
} from 'viem';
import { DevUSDC } from '../devnet/generated/contract-artifacts.js';
import { firstBlockAtOrAfter, LOG_CHUNK } from './authorization-state.js';

/**
 * The token's transfers to and from the service's address, read from the chain's logs: what a
 * restored database is reconciled against. A transfer to `payTo` made by an EIP-3009
 * authorization (its `AuthorizationUsed` log right before it, same payer) is a sale; any other
 * transfer to it is not. A transfer from it is a payout candidate (the platform wallet signs them).
 */

/** A sale as the chain shows it; x402 puts nothing on chain that names the listing or version. */
export interface ChainSale {
  transaction: Hex;
  payer: Address;
  nonce: Hex;
  amountMicro: bigint;
  validAfter: bigint;
  validBefore: bigint;
  /** The block's time. */
  at: Date;
}

export interface ChainPayout {
  transaction: Hex;
  to: Address;
  amountMicro: bigint;
  at: Date;
}

export type ChainTransfer =
  | { kind: 'sale'; sale: ChainSale }
  | { kind: 'not_a_sale'; transaction: Hex }
  | { kind: 'payout'; payout: ChainPayout };

const transferEvent = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
type TransferLog = Log<bigint, number, false, typeof transferEvent>;

/** The blocks from the first at or after `since` to the newest. */
export async function blocksSince(reader: PublicClient, since: Date): Promise<{ from: bigint; to: bigint }> {
  // Not getBlockNumber: viem answers that from a cache for seconds, and the newest transfers matter most.
  const { number: head } = await reader.getBlock({ blockTag: 'latest' });
  return {
    from: await firstBlockAtOrAfter(reader, BigInt(Math.floor(since.getTime() / 1000)), head),
    to: head,
  };
}

/** Every transfer of `asset` to or from `address` in `blocks`, in chunks public endpoints accept. */
export async function* transfersOf(
  reader: PublicClient,
  asset: Address,
  address: Address,
  blocks: { from: bigint; to: bigint },
): AsyncGenerator<ChainTransfer> {
  for (let start = blocks.from; start <= blocks.to; start += LOG_CHUNK) {
    const toBlock = start + LOG_CHUNK - 1n < blocks.to ? start + LOG_CHUNK - 1n : blocks.to;
    const range = { address: asset, event: transferEvent, fromBlock: start, toBlock } as const;
    for (const log of await reader.getLogs({ ...range, args: { to: address } })) {
      const sale = await saleOf(reader, asset, log);
      yield sale ? { kind: 'sale', sale } : { kind: 'not_a_sale', transaction: log.transactionHash! };
    }
    for (const log of await reader.getLogs({ ...range, args: { from: address } })) {
      if (!log.transactionHash || !log.blockNumber) continue;
      yield {
        kind: 'payout',
        payout: {
          transaction: log.transactionHash,
          to: log.args.to!,
          amountMicro: log.args.value!,
          at: await blockTime(reader, log.blockNumber),
        },
      };
    }
  }
}

/**
 * The transactions of every transfer of `asset` to or from `address` in `blocks`, lower case, read
 * from the logs alone (no receipt, no block): what the start-up check compares with the database.
 */
export async function transferTransactionsOf(
  reader: PublicClient,
  asset: Address,
  address: Address,
  blocks: { from: bigint; to: bigint },
): Promise<string[]> {
  const found = new Set<string>();
  for (let start = blocks.from; start <= blocks.to; start += LOG_CHUNK) {
    const toBlock = start + LOG_CHUNK - 1n < blocks.to ? start + LOG_CHUNK - 1n : blocks.to;
    const range = { address: asset, event: transferEvent, fromBlock: start, toBlock } as const;
    const [to, from] = await Promise.all([
      reader.getLogs({ ...range, args: { to: address } }),
      reader.getLogs({ ...range, args: { from: address } }),
    ]);
    for (const log of [...to, ...from]) if (log.transactionHash) found.add(log.transactionHash.toLowerCase());
  }
  return [...found];
}

async function blockTime(reader: PublicClient, blockNumber: bigint): Promise<Date> {
  const block = await reader.getBlock({ blockNumber });
  return new Date(Number(block.timestamp) * 1000);
}

async function saleOf(
  reader: PublicClient,
  asset: Address,
  log: TransferLog,
): Promise<ChainSale | undefined> {
  if (!log.transactionHash || log.logIndex === null || !log.blockNumber) return undefined;
  const receipt = await reader.getTransactionReceipt({ hash: log.transactionHash });
  const used = parseEventLogs({ abi: DevUSDC.abi, logs: receipt.logs, eventName: 'AuthorizationUsed' }).find(
    (entry) => isAddressEqual(entry.address, asset) && entry.logIndex === log.logIndex - 1,
  );
  if (!used || !isAddressEqual(used.args.authorizer, log.args.from!)) return undefined;
  const at = await blockTime(reader, log.blockNumber);
  const window = await authorizationWindow(reader, log.transactionHash, used.args.nonce);
  return {
    transaction: log.transactionHash,
    payer: log.args.from!,
    nonce: used.args.nonce,
    amountMicro: log.args.value!,
    validAfter: window?.validAfter ?? 0n,
    validBefore: window?.validBefore ?? BigInt(Math.floor(at.getTime() / 1000)),
    at,
  };
}

/** The authorization's validity, read from the call when it was a direct `transferWithAuthorization`. */
async function authorizationWindow(
  reader: PublicClient,
  hash: Hex,
  nonce: Hex,
): Promise<{ validAfter: bigint; validBefore: bigint } | undefined> {
  const transaction = await reader.getTransaction({ hash });
  try {
    const call = decodeFunctionData({ abi: DevUSDC.abi, data: transaction.input });
    if (call.functionName !== 'transferWithAuthorization') return undefined;
    const args = call.args as readonly unknown[];
    if (args[5] !== nonce) return undefined;
    return { validAfter: args[3] as bigint, validBefore: args[4] as bigint };
  } catch {
    // Sent through a contract (a smart account, a multicall): the window is not in our reach.
    return undefined;
  }
}
