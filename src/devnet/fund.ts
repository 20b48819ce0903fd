import type { Address, Hex } from 'viem';
import type { AppContext } from '../context.js';
import { MAX_MICRO_USDC } from '../platform/money/usd.js';

/**
 * `repo402 devnet fund`: mints test USDC on the devnet chain and tops the address's ether up to
 * the gas allowance (DEVNET_GAS_ALLOWANCE_WEI), so an address that sends transactions of its own,
 * such as a split tier's PLATFORM_PAYOUT_ADDRESS signing payout sweeps, can pay for them. Resolves
 * to the mint's transaction hash.
 */
export async function fundOnDevnet(ctx: AppContext, address: Address, amountMicro: bigint): Promise<Hex> {
  if (amountMicro <= 0n || amountMicro > MAX_MICRO_USDC)
    throw new RangeError('amount must be 1 to 10^15 micro-USDC');
  const rail = await ctx.rail();
  if (!rail.devnet) throw new Error('devnet fund needs PAYMENTS_MODE=devnet');
  const minted = await rail.devnet.fund(address, amountMicro);
  await rail.devnet.fundGas(address);
  return minted;
}
