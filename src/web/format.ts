import { getAddress } from 'viem';
import { formatUsd } from '../platform/money/usd.js';

/** "$19.99" from a micro-USDC string; "Free" for zero; "not set" for null. */
export function usd(micro: string | null | undefined): string {
  if (micro === null || micro === undefined) return 'not set';
  const amount = BigInt(micro);
  return amount === 0n ? 'Free' : `$${formatUsd(amount)}`;
}

/** "$0.00", "$19.99": an amount of money (a balance, a sale), never "Free". */
export function money(micro: string): string {
  return `$${formatUsd(BigInt(micro))}`;
}

/** "1 sale", "2 sales". */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** The dollars to put back into a price field: "19.99", "0.10". */
export function dollarsField(micro: string | null | undefined): string {
  return micro === null || micro === undefined ? '' : formatUsd(BigInt(micro));
}

/**
 * An address as wallets and explorers show it, in EIP-55 checksum case; the service answers in
 * lower case, which no wallet shows, so a person comparing the two would doubt it.
 */
export function checksummed(address: string): string {
  try {
    return getAddress(address);
  } catch {
    return address;
  }
}

/** 0x1234…cdef */
export function shortHex(value: string, keep = 4): string {
  return value.length > 2 + keep * 2 + 1 ? `${value.slice(0, 2 + keep)}…${value.slice(-keep)}` : value;
}

/** A date and time in the reader's zone, with UTC on hover via `utc()`. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function utc(iso: string): string {
  return `${iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, '')} UTC`;
}
