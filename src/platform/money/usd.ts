/**
 * Dollars for people, micro-USDC for the program: exact conversions with no float anywhere. Pure
 * (no server imports), so the web app's bundle uses these very functions.
 */

export const MAX_MICRO_USDC = 10n ** 15n;
const DOLLARS = /^(0|[1-9][0-9]{0,9})(?:\.([0-9]{1,6}))?$/;

/** "9.00" style dollars; exact, with at least two decimals and no trailing noise. */
export function formatUsd(amount: bigint): string {
  const whole = amount / 1_000_000n;
  const fraction = (amount % 1_000_000n)
    .toString()
    .padStart(6, '0')
    .replace(/0{1,4}$/, '');
  return `${whole}.${fraction.padEnd(2, '0')}`;
}

/**
 * What a person typed as dollars ("19.99", "0.10", "1234.567891", "$5") as micro-USDC, or
 * undefined when it is not an amount: at most six decimals (USDC has six), no sign, no exponent,
 * no thousands separators.
 */
export function parseUsd(typed: string): bigint | undefined {
  const match = DOLLARS.exec(typed.trim().replace(/^\$/, ''));
  if (!match) return undefined;
  const amount = BigInt(match[1]!) * 1_000_000n + BigInt((match[2] ?? '').padEnd(6, '0'));
  return amount <= MAX_MICRO_USDC ? amount : undefined;
}
