import { formatUsd } from '../platform/money/usd.js';

/**
 * The price of the selling guide's example listing, which the buying guide's program is set up to
 * pay: above the official x402 client's default $1.00 limit, so the example shows that setting.
 */
export const EXAMPLE_PRICE_MICRO = 9_000_000n;

/** The example price as the official client's spend limit takes it (`'$9.00'`). */
export const EXAMPLE_PRICE_USD = `$${formatUsd(EXAMPLE_PRICE_MICRO)}`;
