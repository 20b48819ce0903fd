import type { AppContext } from '../context.js';
import { findCreatorByPayoutAddress } from '../identity/creators.js';
import { logEvent } from '../platform/events.js';
import { formatMicroUsdc } from '../platform/money/money.js';
import { openUnattributedSales, recordChainSale } from '../purchases/chain-sales.js';
import {
  blocksSince,
  type ChainPayout,
  transfersOf,
  transferTransactionsOf,
} from '../x402/chain-transfers.js';
import { SWEEP_LOCK } from './payouts.js';
import {
  advanceChainCheckpoint,
  insertRecoveredSweep,
  insertUnresolvedTransferOut,
  knownTransactions,
  newestChainKnowledge,
  openTransfersOut,
  sweepByTransaction,
  unresolvedTransferOut,
} from './store.js';

/**
 * Restore against the chain. A database restored from a backup forgets the sales settled and the
 * payouts sent since the backup, but the chain does not. This reads the token's transfers to and
 * from the service's address since a time and records each one the database lacks: a sale is
 * granted and credited to its creator, a payout is recorded sent and debited, so the sweep never
 * pays that balance again. What the database has is left alone, and running it twice changes
 * nothing: the unique indexes on the payments' and sweeps' transactions hold that, across
 * processes, whichever gets there first.
 */

export interface ChainRecovery {
  from_block: string;
  to_block: string;
  sales: { known: number; recovered: number; unattributed: number; not_sales: number };
  payouts: { known: number; recovered: number; unresolved: number };
  /** What waits for the operator after this run, found by it or before. */
  open: { transfers_out: number; sales: number };
}

export async function recoverFromChain(ctx: AppContext, since: Date): Promise<ChainRecovery> {
  const rail = await ctx.rail();
  const blocks = await blocksSince(rail.reader, since);
  const result: ChainRecovery = {
    from_block: blocks.from.toString(),
    to_block: blocks.to.toString(),
    sales: { known: 0, recovered: 0, unattributed: 0, not_sales: 0 },
    payouts: { known: 0, recovered: 0, unresolved: 0 },
    open: { transfers_out: 0, sales: 0 },
  };
  // Under the sweeps' lock: a sweep waits until the payouts found here are debited.
  await ctx.database.withAdvisoryLock(SWEEP_LOCK, async () => {
    for await (const transfer of transfersOf(rail.reader, rail.asset, rail.payTo, blocks)) {
      if (transfer.kind === 'not_a_sale') result.sales.not_sales += 1;
      else if (transfer.kind === 'sale')
        result.sales[(await recordChainSale(ctx, rail, transfer.sale)).outcome] += 1;
      else result.payouts[await recordPayout(ctx, transfer.payout)] += 1;
    }
    const head = await rail.reader.getBlock({ blockNumber: blocks.to });
    await advanceChainCheckpoint(
      ctx.database.db,
      blocks.to,
      new Date(Number(head.timestamp) * 1000),
      ctx.clock.now(),
    );
  });
  result.open = {
    transfers_out: (await openTransfersOut(ctx.database.db)).length,
    sales: (await openUnattributedSales(ctx.database.db)).length,
  };
  logEvent(ctx.log, 'chain.reconciled', { since: since.toISOString(), ...result });
  return result;
}

/**
 * A transfer from us to the payout address a creator had in force then is that creator's payout.
 * Any other transfer from us may be a payout too (to an address changed after the backup): it is
 * kept unresolved, and the sweep pays nothing until the operator says what it was.
 */
async function recordPayout(ctx: AppContext, payout: ChainPayout): Promise<keyof ChainRecovery['payouts']> {
  const transaction = payout.transaction.toLowerCase();
  if (await sweepByTransaction(ctx.database.db, payout.transaction)) return 'known';
  const kept = await unresolvedTransferOut(ctx.database.db, transaction);
  if (kept) return kept.resolution ? 'known' : 'unresolved';
  const creator = await findCreatorByPayoutAddress(ctx.database.db, payout.to, payout.at);
  if (!creator) {
    const inserted = await insertUnresolvedTransferOut(ctx.database.db, {
      transaction,
      toAddress: payout.to.toLowerCase(),
      amountMicro: payout.amountMicro,
      at: payout.at,
      foundAt: ctx.clock.now(),
    });
    if (inserted) {
      logEvent(ctx.log, 'chain.transfer_out_unresolved', {
        transaction,
        to: payout.to,
        amount_micro: formatMicroUsdc(payout.amountMicro),
        at: payout.at.toISOString(),
      });
    }
    return 'unresolved';
  }
  const sweep = await insertRecoveredSweep(ctx.database.db, {
    creatorId: creator.id,
    address: payout.to.toLowerCase(),
    amountMicro: payout.amountMicro,
    transaction: payout.transaction,
    at: payout.at,
  });
  if (!sweep) return 'known';
  logEvent(ctx.log, 'payout.sent', {
    sweep_id: sweep.id,
    amount_micro: formatMicroUsdc(sweep.amountMicro),
    transaction: payout.transaction,
    recovered_from_chain: true,
  });
  return 'recovered';
}

/** Transfers made just before what the database knows are read too: they cost a read, never a record. */
export const CHAIN_MARGIN_MS = 60 * 60_000;

/**
 * The start-up check of a process that takes payments, for a database restored without
 * `restored-from.json` (a `pg_restore`, a point-in-time recovery): reads which transactions moved
 * the token to or from `payTo` since the newest time this database knows the chain at (its
 * checkpoint, newest settled payment or payout; a database that knows none, its first creator),
 * less an hour, and reconciles from there when the chain holds one the database lacks. Otherwise
 * it moves the checkpoint to the newest block, so the next start reads only what came after.
 * Skipped on the in-process devnet, whose chain is replayed from this very database.
 */
export async function reconcileIfChainAhead(ctx: AppContext): Promise<ChainRecovery | undefined> {
  const rail = await ctx.rail();
  if (rail.devnet) return undefined;
  const db = ctx.database.db;
  const known = await newestChainKnowledge(db);
  const head = await rail.reader.getBlock({ blockTag: 'latest' });
  const headAt = new Date(Number(head.timestamp) * 1000);
  if (known) {
    const since = new Date(known.getTime() - CHAIN_MARGIN_MS);
    const blocks = await blocksSince(rail.reader, since);
    const transactions = await transferTransactionsOf(rail.reader, rail.asset, rail.payTo, {
      from: blocks.from,
      to: head.number,
    });
    const lacking = (await knownTransactions(db, transactions)).size < transactions.length;
    if (lacking) {
      ctx.log.warn(
        { since: since.toISOString(), transfers: transactions.length },
        'the chain holds transfers to or from the platform address this database does not know (restored?): reconciling',
      );
      return recoverFromChain(ctx, since);
    }
  }
  await advanceChainCheckpoint(db, head.number, headAt, ctx.clock.now());
  return undefined;
}
