import type { AppContext } from '../context.js';
import { findCreatorByHandle } from '../identity/creators.js';
import { AppError } from '../platform/errors.js';
import { logEvent } from '../platform/events.js';
import { formatMicroUsdc } from '../platform/money/money.js';
import { SWEEP_LOCK } from './payouts.js';
import {
  openTransfersOut,
  resolveTransferOutAsNotPayout,
  resolveTransferOutAsPayout,
  type UnresolvedTransferOut,
  unresolvedTransferOut,
} from './store.js';

/**
 * Transfers out of `payTo` the reconciliation could not attribute (`unresolved_transfers_out`): while
 * one is open the payout sweep is held. The operator says what each was: a creator's payout (it is
 * debited, so that balance is never swept again) or no payout at all.
 */

export function unresolvedTransfersOut(ctx: AppContext): Promise<UnresolvedTransferOut[]> {
  return openTransfersOut(ctx.database.db);
}

export type TransferOutResolution = { creator: string } | { notAPayout: string };

export async function resolveTransferOut(
  ctx: AppContext,
  transaction: string,
  resolution: TransferOutResolution,
): Promise<UnresolvedTransferOut> {
  const hash = transaction.toLowerCase();
  const kept = await unresolvedTransferOut(ctx.database.db, hash);
  if (!kept)
    throw new AppError('not_found', {
      message: `no unresolved transfer out has transaction ${transaction}: one made since the last reconciliation is found by repo402 reconcile --since <a time before it>`,
    });
  if (kept.resolution) {
    throw AppError.invalid(
      [{ field: 'transaction', reason: `already resolved (${kept.resolution})` }],
      `the transfer in ${transaction} was already resolved: ${kept.resolution}`,
    );
  }
  const now = ctx.clock.now();
  // Under the sweeps' lock: a sweep never runs between the debit and the hold lifting.
  const resolved = await ctx.database.withAdvisoryLock(SWEEP_LOCK, async () => {
    if ('creator' in resolution) {
      const creator = await findCreatorByHandle(ctx.database.db, resolution.creator);
      if (!creator) throw new AppError('not_found', { message: `no creator ${resolution.creator}` });
      const done = await resolveTransferOutAsPayout(ctx.database.db, hash, creator.id, now);
      if (done) {
        logEvent(ctx.log, 'payout.sent', {
          sweep_id: done.sweep.id,
          amount_micro: formatMicroUsdc(done.sweep.amountMicro),
          transaction: hash,
          recovered_from_chain: true,
        });
      }
      return done?.transfer;
    }
    return resolveTransferOutAsNotPayout(ctx.database.db, hash, resolution.notAPayout, now);
  });
  if (!resolved) return resolveTransferOut(ctx, transaction, resolution);
  logEvent(ctx.log, 'payout.resolved', {
    transaction: hash,
    resolution: resolved.resolution,
    creator: 'creator' in resolution ? resolution.creator : undefined,
    reason: resolved.reason ?? undefined,
    amount_micro: formatMicroUsdc(resolved.amountMicro),
  });
  return resolved;
}

/** A transfer out as operator commands print it (JSON: amounts as decimal strings). */
export function transferOutView(row: UnresolvedTransferOut) {
  return {
    transaction: row.transaction,
    to: row.toAddress,
    amount_micro: formatMicroUsdc(row.amountMicro),
    at: row.at.toISOString(),
    found_at: row.foundAt.toISOString(),
    resolution: row.resolution,
    ...(row.creatorId ? { creator_id: row.creatorId, sweep_id: row.sweepId } : {}),
    ...(row.reason ? { reason: row.reason } : {}),
    ...(row.resolvedAt ? { resolved_at: row.resolvedAt.toISOString() } : {}),
  };
}
