import { getAddress, isAddress } from 'viem';
import { formatUsd } from '../../platform/money/usd.js';
import { ApiError } from '../api.js';
import { errorText } from '../errors.js';

/**
 * What the buyer's pages say about a refusal: what happened and what to do next, in a buyer's
 * words where the catalogue's are a creator's; every other code as the catalogue says it.
 */
const BUYER_WORDS: Record<string, string> = {
  retired: 'This listing is no longer sold. If your wallet bought it before, your library still has it.',
  sanctioned_counterparty:
    'This wallet cannot buy here: its address is on a sanctions list this service must follow. Nothing was charged.',
  blocked_jurisdiction: 'Purchases are not available from where you are connecting. Nothing was charged.',
  replay: 'That payment was already used. Open your library to download what it bought.',
  not_entitled: 'This wallet does not own that version. Buy it on its listing page.',
  invalid_signature: 'Your wallet’s proof was not accepted; it may have expired. Connect the wallet again.',
  expired_authorization:
    'The payment authorization expired before it reached the chain. Pay again for a fresh one.',
};

export function buyerErrorText(error: unknown): string {
  if (error instanceof ApiError && BUYER_WORDS[error.body.code]) return BUYER_WORDS[error.body.code]!;
  return errorText(error);
}

/** Not enough USDC: the balance the wallet holds, against the price. */
export function balanceText(
  balanceMicro: bigint,
  priceMicro: bigint,
  devnet: boolean,
  chainName: string,
): string {
  const where = devnet ? 'test USDC on this devnet' : `USDC on ${chainName}`;
  return `Your wallet holds $${formatUsd(balanceMicro)} ${where} and the price is $${formatUsd(priceMicro)}. Add at least $${formatUsd(priceMicro - balanceMicro)} ${where} to it, then pay again.`;
}

export function dollars(micro: bigint | string): string {
  const amount = BigInt(micro);
  return amount === 0n ? 'Free' : `$${formatUsd(amount)}`;
}

/** An address as people compare them with their wallet's: checksummed (D-120), the start and the end. */
export function shortAddress(address: string): string {
  const shown = isAddress(address) ? getAddress(address) : address;
  return `${shown.slice(0, 6)}…${shown.slice(-4)}`;
}
