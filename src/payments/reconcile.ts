import type { AppContext } from '../context.js';
import { paymentRail } from './context.js';
import {
  authorizationOnChain,
  claimForSettlement,
  driveSettlement,
  recordSettlement,
  trackAttempt,
} from './settlement.js';
import { releasePayment, unresolvedPayments } from './store.js';

/** A `settling` row untouched this long is the reconciler's (a live request would have moved it). */
const IDLE_MS = 30_000;
const BATCH = 50;

/**
 * Resolves payments left `settling` (a crash, a timeout, an ambiguous facilitator answer). The
 * chain decides where we can read it: an authorization used on chain becomes the purchase; an
 * unused one past its validBefore can never settle and is marked failed; one still valid is
 * settled now, as the buyer signed it to be.
 */
export async function reconcilePayments(
  ctx: AppContext,
): Promise<{ settled: number; failed: number; pending: number }> {
  const rail = await paymentRail(ctx);
  const now = ctx.clock.now();
  const counts = { settled: 0, failed: 0, pending: 0 };
  for (const row of await unresolvedPayments(
    ctx.database.db,
    new Date(now.getTime() - IDLE_MS),
    now,
    BATCH,
  )) {
    const claimed = await claimForSettlement(ctx, row.id);
    if (!claimed) continue;
    const onChain = await authorizationOnChain(rail, claimed);
    if (onChain?.used) {
      await recordSettlement(ctx, claimed, onChain.transaction ?? claimed.transaction ?? 'unknown');
      counts.settled += 1;
      continue;
    }
    if (claimed.validBefore <= now) {
      await releasePayment(ctx.database.db, claimed.id, ctx.clock.now(), {
        state: 'failed',
        errorReason: 'expired_unsettled',
      });
      counts.failed += 1;
      continue;
    }
    const outcome = await trackAttempt(claimed.id, () => driveSettlement(ctx, rail, claimed));
    counts[outcome.state === 'settled' ? 'settled' : outcome.state === 'failed' ? 'failed' : 'pending'] += 1;
  }
  if (counts.settled + counts.failed + counts.pending > 0) ctx.log.info(counts, 'payments reconciled');
  return counts;
}
