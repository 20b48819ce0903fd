import type { AppContext } from '../context.js';
import {
  chainStateOf,
  claimForSettlement,
  concludeFromChain,
  driveSettlement,
  recordSettlement,
  trackAttempt,
} from './settlement.js';
import { recentlyFailedPayments, touchPayment, unresolvedPayments } from './store.js';

/** A row untouched this long is the reconciler's (a live request would have moved it). */
const IDLE_MS = 30_000;
const BATCH = 50;
/** A failed authorization is watched on chain until this long after its validBefore. */
const WATCH_FAILED_MS = 10 * 60_000;

/**
 * Resolves payments left `settling` (a crash, a timeout, a lost or ambiguous facilitator answer)
 * from the chain: a transfer to us becomes the purchase; a cancelled, foreign or expired unused
 * authorization is failed; one still usable is settled now, as the buyer signed it to be; one the
 * chain cannot be read for stays `settling`. Failed rows whose authorization could still be
 * executed (by its payer, or a broadcast we never heard of) are read once more, never settled.
 */
export async function reconcilePayments(
  ctx: AppContext,
): Promise<{ settled: number; failed: number; pending: number }> {
  const rail = await ctx.rail();
  const now = ctx.clock.now();
  const idleSince = new Date(now.getTime() - IDLE_MS);
  const counts = { settled: 0, failed: 0, pending: 0 };
  for (const row of await unresolvedPayments(ctx.database.db, idleSince, now, BATCH)) {
    const claim = await claimForSettlement(ctx, row.id);
    if (!('claimed' in claim)) continue;
    const outcome = await trackAttempt(ctx, row.id, () => driveSettlement(ctx, rail, claim.claimed));
    counts[outcome.state === 'settled' ? 'settled' : outcome.state === 'failed' ? 'failed' : 'pending'] += 1;
  }
  const watchedAfter = new Date(now.getTime() - WATCH_FAILED_MS);
  for (const row of await recentlyFailedPayments(ctx.database.db, idleSince, watchedAfter, BATCH)) {
    const chain = await chainStateOf(ctx, rail, row);
    if (chain?.state === 'paid') {
      await recordSettlement(ctx, row, chain.transaction);
      counts.settled += 1;
    } else if (chain?.state === 'unused' && chain.expired) {
      await concludeFromChain(ctx, row, chain);
    } else {
      await touchPayment(ctx.database.db, row.id, ctx.clock.now());
    }
  }
  ctx.metrics.reconcilerRuns.inc();
  for (const [decision, count] of Object.entries(counts))
    ctx.metrics.reconcilerDecisions.inc({ decision }, count);
  if (counts.settled + counts.failed + counts.pending > 0) ctx.log.info(counts, 'payments reconciled');
  return counts;
}
