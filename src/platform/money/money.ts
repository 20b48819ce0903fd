import { z } from 'zod';
import { MAX_MICRO_USDC } from './usd.js';

/**
 * Money is micro-USDC: a `bigint` inside the program, a decimal integer string on the wire and in
 * the database. It is never a float and never a JSON number. This is the only conversion point.
 */

const DECIMAL = /^(0|[1-9][0-9]*)$/;

export function parseMicroUsdc(value: string): bigint {
  if (!DECIMAL.test(value)) throw new RangeError(`not a decimal integer string: ${JSON.stringify(value)}`);
  const amount = BigInt(value);
  if (amount > MAX_MICRO_USDC) throw new RangeError(`amount above ${MAX_MICRO_USDC}`);
  return amount;
}

export function formatMicroUsdc(amount: bigint): string {
  if (amount < 0n || amount > MAX_MICRO_USDC) throw new RangeError(`amount out of range: ${amount}`);
  return amount.toString();
}

/** A request field carrying micro-USDC; parses to `bigint`. */
export const MicroUsdcInput = z
  .string()
  .regex(DECIMAL, {
    message: 'must be a decimal integer string of micro-USDC, for example "9000000"',
    abort: true,
  })
  .refine(
    (value) => value.length <= 16 && BigInt(value) <= MAX_MICRO_USDC,
    'must be at most 10^15 micro-USDC',
  )
  .transform((value) => BigInt(value));

/** A response field carrying micro-USDC. */
export const MicroUsdc = z
  .string()
  .regex(DECIMAL)
  .meta({ description: 'micro-USDC (6 decimals) as a decimal integer string', examples: ['9000000'] });
