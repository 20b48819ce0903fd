import {
  type Address,
  type Hex,
  isAddressEqual,
  type PublicClient,
  parseAbiItem,
  parseEventLogs,
} from 'viem';
import { DevUSDC } from '../devnet/generated/contract-artifacts.js';

/**
 * What the token contract says became of one EIP-3009 authorization: the chain is the only
 * witness of whether a buyer's transfer happened when a facilitator's answer was lost, refused or
 * contradicted. Every read here can throw (an RPC down, a timeout): the caller then knows nothing
 * and must not conclude.
 *
 * `authorizationState` alone is not proof of payment: it is also true after the payer cancels the
 * authorization (`cancelAuthorization`), or after the payer used the same nonce for another
 * transfer it signed. Payment is proven by the `AuthorizationUsed` event followed, in the same
 * transaction, by the `Transfer` it authorized: from the payer, to our address, of the amount.
 */
export type AuthorizationState =
  /** The transfer to us happened, in `transaction`. */
  | { state: 'paid'; transaction: Hex }
  /** Used for a transfer that did not pay us (another recipient or amount): never a sale. */
  | { state: 'used_elsewhere'; transaction: Hex }
  /** Cancelled by its payer: can never settle. */
  | { state: 'canceled' }
  /** Marked used, but neither event is in the blocks searched: an operator must look. */
  | { state: 'used_unlocated' }
  /** Unused; `expired` once no block can include it any more. */
  | { state: 'unused'; expired: boolean };

export interface AuthorizationQuery {
  asset: string;
  payer: string;
  nonce: string;
  payTo: string;
  amountMicro: bigint;
  validAfter?: Date;
  validBefore: Date;
  /** When we first saw the authorization. */
  seenAt: Date;
}

/**
 * How far before we first saw an authorization its transfer is looked for: a payer may execute
 * its own authorization before presenting it. Bounded so a search never scans the whole chain.
 */
const LOOKBACK_SECONDS = 3600n;
/** Blocks per eth_getLogs call; public Base endpoints refuse much wider ranges. */
export const LOG_CHUNK = 1000n;
/**
 * Past validBefore by this much on our clock, an unused authorization is expired even if the
 * newest block is older (a quiet devnet mines no blocks): any block made from then on is later.
 */
const CLOCK_MARGIN_MS = 120_000;

const authorizationUsed = parseAbiItem(
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
);
const authorizationCanceled = parseAbiItem(
  'event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)',
);

export async function readAuthorization(
  reader: PublicClient,
  query: AuthorizationQuery,
  now: Date,
): Promise<AuthorizationState> {
  const asset = query.asset as Address;
  const payer = query.payer as Address;
  const nonce = query.nonce as Hex;
  const head = await reader.getBlock({ blockTag: 'latest' });
  const used = (await reader.readContract({
    address: asset,
    abi: DevUSDC.abi,
    functionName: 'authorizationState',
    args: [payer, nonce],
    blockNumber: head.number,
  })) as boolean;
  if (!used) {
    const validBefore = BigInt(Math.floor(query.validBefore.getTime() / 1000));
    const expired =
      head.timestamp >= validBefore || now.getTime() >= query.validBefore.getTime() + CLOCK_MARGIN_MS;
    return { state: 'unused', expired };
  }

  const seenAt = BigInt(Math.floor(query.seenAt.getTime() / 1000));
  const validAfter = query.validAfter ? BigInt(Math.floor(query.validAfter.getTime() / 1000)) : 0n;
  const since = seenAt - LOOKBACK_SECONDS > validAfter ? seenAt - LOOKBACK_SECONDS : validAfter;
  const fromBlock = await firstBlockAtOrAfter(reader, since, head.number);
  const args = { authorizer: payer, nonce };
  for (let start = fromBlock; start <= head.number; start += LOG_CHUNK) {
    const toBlock = start + LOG_CHUNK - 1n < head.number ? start + LOG_CHUNK - 1n : head.number;
    const range = { address: asset, args, fromBlock: start, toBlock };
    const [usedLog] = await reader.getLogs({ ...range, event: authorizationUsed });
    if (usedLog?.transactionHash) return transferOf(reader, query, usedLog.transactionHash, usedLog.logIndex);
    const [canceled] = await reader.getLogs({ ...range, event: authorizationCanceled });
    if (canceled) return { state: 'canceled' };
  }
  return { state: 'used_unlocated' };
}

/** Whether the Transfer the authorization made (right after its AuthorizationUsed log) paid us. */
async function transferOf(
  reader: PublicClient,
  query: AuthorizationQuery,
  transaction: Hex,
  usedLogIndex: number | null,
): Promise<AuthorizationState> {
  const receipt = await reader.getTransactionReceipt({ hash: transaction });
  const transfer = parseEventLogs({ abi: DevUSDC.abi, logs: receipt.logs, eventName: 'Transfer' }).find(
    (log) =>
      isAddressEqual(log.address, query.asset as Address) &&
      usedLogIndex !== null &&
      log.logIndex === usedLogIndex + 1,
  );
  const paid =
    transfer !== undefined &&
    isAddressEqual(transfer.args.from, query.payer as Address) &&
    isAddressEqual(transfer.args.to, query.payTo as Address) &&
    transfer.args.value === query.amountMicro;
  return paid ? { state: 'paid', transaction } : { state: 'used_elsewhere', transaction };
}

/** The first block whose timestamp is at or after `timestamp` (binary search; the head if none is). */
export async function firstBlockAtOrAfter(
  reader: PublicClient,
  timestamp: bigint,
  head: bigint,
): Promise<bigint> {
  let low = 0n;
  let high = head;
  while (low < high) {
    const middle = (low + high) / 2n;
    const block = await reader.getBlock({ blockNumber: middle });
    if (block.timestamp >= timestamp) high = middle;
    else low = middle + 1n;
  }
  return low;
}
