import type { Address, Hex } from 'viem';
import type { AppContext } from '../context.js';
import { payoutAddressInForce } from '../identity/creators.js';
import { logEvent } from '../platform/events.js';
import { formatMicroUsdc } from '../platform/money/money.js';
import type { PayoutOutcome, PayoutTransfers } from '../x402/payout-transfers.js';
import {
  creatorBalances,
  finishSweep,
  insertSweep,
  openTransfersOut,
  recordSweepTransaction,
  type SweepRow,
  sendingSweeps,
} from './store.js';

/** Serialises sweeps and their reconciliation across processes: a balance is never paid out twice. */
export const SWEEP_LOCK = 0x5ee9_0001;
/** How long a sweep waits for its receipt before leaving the payout to the reconciler. */
const SWEEP_RECEIPT_WAIT_MS = 60_000;
/** The reconciler runs every minute; it waits less so one slow payout does not hold the rest. */
const RECONCILE_RECEIPT_WAIT_MS = 10_000;

/**
 * Pays each creator's balance to the payout address in force now (a change requested less than
 * 48 hours ago is not yet: the old address is paid). The sweep and its ledger debit are written
 * first, then the signed transfer's hash and bytes, then the transfer is sent. Only a final answer
 * from the chain (reverted, or its nonce taken by another transaction), or a failure before
 * anything was signed, reverses the debit; an unanswered send stays debited until
 * `reconcileSweeps` reads its outcome. So balance = credits − sweeps + reversals always holds and
 * no payout is paid twice or lost.
 *
 * While a transfer out of `payTo` found on chain is unresolved (`repo402 payouts resolve`), nothing
 * is sent: it may be a payout the database forgot, whose balance a sweep would pay again. Read
 * under the sweeps' lock, which the reconciliation holds while it records such transfers.
 */
export async function sweepPayouts(ctx: AppContext): Promise<SweepRow[]> {
  const { payouts } = await ctx.rail();
  if (!payouts) {
    ctx.log.warn(
      'payout sweep skipped: no payout key (PAYOUT_PRIVATE_KEY on mainnet and testnet; see docs/PAYMENTS.md)',
    );
    return [];
  }
  return ctx.database.withAdvisoryLock(SWEEP_LOCK, async () => {
    const unresolved = await openTransfersOut(ctx.database.db);
    if (unresolved.length > 0) {
      logEvent(ctx.log, 'payout.held', {
        unresolved_transfers_out: unresolved.map(({ transaction }) => transaction),
      });
      ctx.log.warn(
        'payout sweep held: transfers out of the platform address are unresolved (repo402 payouts unresolved; docs/OPERATIONS.md)',
      );
      return [];
    }
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
      done.push(await pay(ctx, payouts, sweep));
    }
    return done;
  });
}

/**
 * Settles every sweep left `sending` (a lost answer, a crash) from the chain: mined becomes
 * `sent`; reverted or dropped is reversed; one never signed is reversed (nothing can have left);
 * one the chain has not seen is sent again with the same signed bytes, which can be mined once only.
 */
export async function reconcileSweeps(ctx: AppContext): Promise<SweepRow[]> {
  const { payouts } = await ctx.rail();
  if (!payouts) return [];
  return ctx.database.withAdvisoryLock(SWEEP_LOCK, async () => {
    const settled: SweepRow[] = [];
    for (const sweep of await sendingSweeps(ctx.database.db)) {
      if (!sweep.transaction || !sweep.rawTransaction) {
        settled.push(await close(ctx, sweep, 'failed', 'interrupted before the transfer was signed'));
        continue;
      }
      const signed = { hash: sweep.transaction as Hex, raw: sweep.rawTransaction as Hex };
      let outcome = await payouts.outcome(signed, 0);
      if (outcome === 'unknown') {
        await send(ctx, payouts, sweep.id, signed.raw);
        outcome = await payouts.outcome(signed, RECONCILE_RECEIPT_WAIT_MS);
      }
      settled.push(await closeOnOutcome(ctx, sweep, outcome));
    }
    if (settled.length > 0)
      ctx.log.info({ sweeps: settled.map(({ id, state }) => ({ id, state })) }, 'payout sweeps reconciled');
    return settled;
  });
}

async function pay(ctx: AppContext, payouts: PayoutTransfers, sweep: SweepRow): Promise<SweepRow> {
  let signed: Awaited<ReturnType<PayoutTransfers['sign']>>;
  try {
    signed = await payouts.sign(sweep.address as Address, sweep.amountMicro);
  } catch (error) {
    ctx.log.error({ err: error, sweepId: sweep.id }, 'payout refused before signing; reversed in the ledger');
    return close(ctx, sweep, 'failed', (error as Error).message);
  }
  await recordSweepTransaction(ctx.database.db, sweep.id, {
    transaction: signed.hash,
    rawTransaction: signed.raw,
  });
  await send(ctx, payouts, sweep.id, signed.raw);
  const outcome = await payouts.outcome(signed, SWEEP_RECEIPT_WAIT_MS);
  return closeOnOutcome(ctx, { ...sweep, transaction: signed.hash, rawTransaction: signed.raw }, outcome);
}

/** A send error is ambiguous (the bytes may have reached the chain): logged, and the chain decides. */
async function send(ctx: AppContext, payouts: PayoutTransfers, sweepId: string, raw: Hex): Promise<void> {
  try {
    await payouts.send(raw);
  } catch (error) {
    ctx.metrics.chainErrors.inc({ operation: 'send_payout' });
    ctx.log.warn({ err: error, sweepId }, 'payout send unanswered; the chain decides its outcome');
  }
}

async function closeOnOutcome(ctx: AppContext, sweep: SweepRow, outcome: PayoutOutcome): Promise<SweepRow> {
  if (outcome === 'mined') return close(ctx, sweep, 'sent');
  if (outcome === 'unknown') {
    ctx.log.warn(
      { sweepId: sweep.id, transaction: sweep.transaction },
      'payout not yet mined; it stays debited',
    );
    return sweep;
  }
  const error =
    outcome === 'reverted' ? 'transfer reverted' : 'transfer dropped: another transaction took its nonce';
  ctx.log.error({ sweepId: sweep.id, transaction: sweep.transaction }, `${error}; reversed in the ledger`);
  return close(ctx, sweep, 'failed', error);
}

async function close(
  ctx: AppContext,
  sweep: SweepRow,
  state: 'sent' | 'failed',
  error?: string,
): Promise<SweepRow> {
  const finishedAt = ctx.clock.now();
  const outcome = state === 'sent' ? { state } : { state, error: (error ?? 'failed').slice(0, 500) };
  await finishSweep(ctx.database.db, sweep.id, outcome, finishedAt);
  ctx.metrics.payouts.inc({ outcome: state });
  logEvent(ctx.log, state === 'sent' ? 'payout.sent' : 'payout.failed', {
    sweep_id: sweep.id,
    amount_micro: formatMicroUsdc(sweep.amountMicro),
    transaction: sweep.transaction ?? undefined,
    error: outcome.error,
  });
  return { ...sweep, ...outcome, finishedAt };
}
