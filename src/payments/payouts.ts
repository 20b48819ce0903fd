import type { AppContext } from '../context.js';
import { payoutAddressInForce } from '../identity/creators.js';
import { paymentRail } from './context.js';
import { creatorBalances, finishSweep, insertSweep, type SweepRow } from './store.js';

/** Serialises sweeps across processes: a balance is never paid out twice. */
const SWEEP_LOCK = 0x5ee9_0001;

/**
 * Pays each creator's balance to the payout address in force now (a change requested less than
 * 48 hours ago is not yet: the old address is paid). The sweep and its ledger debit are written
 * before the transfer; a transfer that fails is reversed in the ledger, so balance = credits −
 * sweeps + reversals always holds.
 */
export async function sweepPayouts(ctx: AppContext): Promise<SweepRow[]> {
  const rail = await paymentRail(ctx);
  const { sendPayout } = rail;
  if (!sendPayout) {
    ctx.log.warn('payout sweep skipped: this deployment cannot sign payouts (see docs/PAYMENTS.md)');
    return [];
  }
  return ctx.database.withAdvisoryLock(SWEEP_LOCK, async () => {
    const done: SweepRow[] = [];
    for (const { creatorId, balanceMicro } of await creatorBalances(ctx.database.db)) {
      if (balanceMicro <= 0n) continue;
      const now = ctx.clock.now();
      const address = await payoutAddressInForce(ctx.database.db, creatorId, now);
      if (!address) continue;
      const sweep = await ctx.database.db.transaction((tx) =>
        insertSweep(tx, {
          creatorId,
          address: address.toLowerCase(),
          amountMicro: balanceMicro,
          createdAt: now,
        }),
      );
      try {
        const transaction = await sendPayout(address, balanceMicro);
        await finishSweep(ctx.database.db, sweep.id, { state: 'sent', transaction }, ctx.clock.now());
        done.push({ ...sweep, state: 'sent', transaction });
      } catch (error) {
        ctx.log.error({ err: error, sweepId: sweep.id }, 'payout transfer failed; reversed in the ledger');
        await finishSweep(
          ctx.database.db,
          sweep.id,
          { state: 'failed', error: (error as Error).message.slice(0, 500) },
          ctx.clock.now(),
        );
        done.push({ ...sweep, state: 'failed' });
      }
    }
    return done;
  });
}
