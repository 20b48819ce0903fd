import { type AnyColumn, and, asc, desc, eq, inArray, isNull, sql } from 'drizzle-orm';
import { type Db, selectRows } from '../db/connect.js';
import {
  chainCheckpoint,
  ledgerEntries,
  payments,
  payoutSweeps,
  purchases,
  unattributedSales,
  unresolvedTransfersOut,
} from '../db/schema/index.js';

/**
 * The creator's money in the database: balances from the ledger, payout sweeps, and the pages of
 * sales, ledger entries and payouts. Ledger credits are written with their purchase, in the
 * settlement's statement (`src/purchases/store.ts`).
 */

export type SweepRow = typeof payoutSweeps.$inferSelect;

/**
 * Each creator's balance, credits − sweeps + reversed sweeps, over all its ledger entries, with
 * what was credited and what was swept net of reversals (so balance = credited − swept).
 */
export async function creatorBalances(db: Db, creatorId?: string) {
  const credit = sql`case when ${ledgerEntries.kind} = 'credit' then ${ledgerEntries.amountMicro} else 0 end`;
  const swept = sql`case ${ledgerEntries.kind} when 'sweep' then ${ledgerEntries.amountMicro}
    when 'sweep_reversal' then -${ledgerEntries.amountMicro} else 0 end`;
  const rows = await db
    .select({
      creatorId: ledgerEntries.creatorId,
      credited: sql<string>`sum(${credit})`,
      swept: sql<string>`sum(${swept})`,
    })
    .from(ledgerEntries)
    .where(creatorId ? eq(ledgerEntries.creatorId, creatorId) : undefined)
    .groupBy(ledgerEntries.creatorId);
  return rows.map((row) => {
    const creditedMicro = BigInt(row.credited);
    const sweptMicro = BigInt(row.swept);
    return { creatorId: row.creatorId, balanceMicro: creditedMicro - sweptMicro, creditedMicro, sweptMicro };
  });
}

export async function insertSweep(
  db: Db,
  row: { creatorId: string; address: string; amountMicro: bigint; createdAt: Date },
): Promise<SweepRow> {
  const [sweep] = await db
    .insert(payoutSweeps)
    .values({ ...row, state: 'sending' })
    .returning();
  await db.insert(ledgerEntries).values({
    creatorId: row.creatorId,
    kind: 'sweep',
    amountMicro: row.amountMicro,
    sweepId: sweep!.id,
    createdAt: row.createdAt,
  });
  return sweep!;
}

/** Writes the signed transfer onto the sweep before it is sent. */
export async function recordSweepTransaction(
  db: Db,
  id: string,
  signed: { transaction: string; rawTransaction: string },
): Promise<void> {
  await db
    .update(payoutSweeps)
    .set(signed)
    .where(and(eq(payoutSweeps.id, id), eq(payoutSweeps.state, 'sending')));
}

/**
 * Closes a sweep once its outcome is final. A failed one is reversed in the same transaction, so
 * the ledger never shows a failed payout still debited. A sweep already closed is left as it is.
 */
export async function finishSweep(
  db: Db,
  id: string,
  outcome: { state: 'sent' } | { state: 'failed'; error: string },
  now: Date,
): Promise<void> {
  await db.transaction(async (tx) => {
    const [sweep] = await tx
      .update(payoutSweeps)
      .set({ ...outcome, finishedAt: now })
      .where(and(eq(payoutSweeps.id, id), eq(payoutSweeps.state, 'sending')))
      .returning();
    if (sweep && outcome.state === 'failed') {
      await tx.insert(ledgerEntries).values({
        creatorId: sweep.creatorId,
        kind: 'sweep_reversal',
        amountMicro: sweep.amountMicro,
        sweepId: sweep.id,
        createdAt: now,
      });
    }
  });
}

/** Sweeps whose transfer outcome is not yet known, oldest first. */
export async function sendingSweeps(db: Db) {
  return db
    .select()
    .from(payoutSweeps)
    .where(eq(payoutSweeps.state, 'sending'))
    .orderBy(asc(payoutSweeps.createdAt));
}

export async function ledgerTotals(db: Db, creatorId: string) {
  const rows = await db
    .select({ kind: ledgerEntries.kind, total: sql<string>`sum(${ledgerEntries.amountMicro})` })
    .from(ledgerEntries)
    .where(eq(ledgerEntries.creatorId, creatorId))
    .groupBy(ledgerEntries.kind);
  const totals = { credit: 0n, sweep: 0n, sweep_reversal: 0n };
  for (const row of rows) totals[row.kind] = BigInt(row.total);
  return totals;
}

// The creator's reads: sales, ledger entries, payouts. Pages are newest first, keyed on
// (created_at, id), so rows inserted while a creator pages never shift or repeat a page.

/** The last row of the previous page. */
export interface PagePosition {
  createdAt: Date;
  id: string;
}

function olderThan(createdAt: AnyColumn, id: AnyColumn, position: PagePosition | undefined) {
  return position
    ? sql`(${createdAt}, ${id}) < (${position.createdAt.toISOString()}::timestamptz, ${position.id}::uuid)`
    : undefined;
}

/**
 * Paid purchases credited to `creatorId` (a free grant has no payment, so it is no sale), with the
 * fee and net of their ledger credit. A purchase whose fee took it all has no credit: net 0.
 */
function creatorSales(creatorId: string) {
  return eq(payments.creatorId, creatorId);
}

export async function salesPage(
  db: Db,
  creatorId: string,
  options: { listingId?: string; after?: PagePosition; limit: number },
) {
  const rows = await db
    .select({
      id: purchases.id,
      listingId: purchases.listingId,
      wallet: purchases.wallet,
      version: purchases.version,
      kind: purchases.kind,
      fromVersion: purchases.fromVersion,
      amountMicro: purchases.amountMicro,
      feeMicro: ledgerEntries.feeMicro,
      netMicro: ledgerEntries.amountMicro,
      transaction: purchases.transaction,
      source: purchases.source,
      createdAt: purchases.createdAt,
    })
    .from(purchases)
    .innerJoin(payments, eq(payments.id, purchases.paymentId))
    .leftJoin(ledgerEntries, eq(ledgerEntries.purchaseId, purchases.id))
    .where(
      and(
        creatorSales(creatorId),
        options.listingId ? eq(purchases.listingId, options.listingId) : undefined,
        olderThan(purchases.createdAt, purchases.id, options.after),
      ),
    )
    .orderBy(desc(purchases.createdAt), desc(purchases.id))
    .limit(options.limit);
  return rows.map(({ feeMicro, netMicro, ...row }) => ({
    ...row,
    feeMicro: feeMicro ?? row.amountMicro,
    netMicro: netMicro ?? 0n,
  }));
}

/**
 * Sales per UTC day for `days` days from `first` (YYYY-MM-DD), zero days included, oldest first:
 * the day series and the sums are both made by the database.
 */
export async function dailySales(db: Db, creatorId: string, first: string, days: number) {
  const from = new Date(`${first}T00:00:00Z`);
  const until = new Date(from.getTime() + days * 86_400_000);
  const day = sql`(${purchases.createdAt} at time zone 'UTC')::date`;
  const rows = await selectRows<{ date: string; sales: number | string; amount: string; net: string }>(
    db,
    sql`select to_char(series.day, 'YYYY-MM-DD') as date,
        count(sold.id)::int as sales,
        coalesce(sum(sold.amount), 0)::text as amount,
        coalesce(sum(sold.net), 0)::text as net
      from (select ${first}::date + offsets.n as day from generate_series(0, ${days - 1}::int) as offsets(n)) as series
      left join (
        select ${purchases.id} as id, ${day} as day, ${purchases.amountMicro} as amount,
          coalesce(${ledgerEntries.amountMicro}, 0) as net
        from ${purchases}
        join ${payments} on ${payments.id} = ${purchases.paymentId}
        left join ${ledgerEntries} on ${ledgerEntries.purchaseId} = ${purchases.id}
        where ${creatorSales(creatorId)}
          and ${purchases.createdAt} >= ${from.toISOString()}::timestamptz
          and ${purchases.createdAt} < ${until.toISOString()}::timestamptz
      ) as sold on sold.day = series.day
      group by series.day
      order by series.day`,
  );
  return rows.map((row) => ({
    date: row.date,
    sales: Number(row.sales),
    amountMicro: BigInt(row.amount),
    netMicro: BigInt(row.net),
  }));
}

export async function ledgerPage(
  db: Db,
  creatorId: string,
  options: { after?: PagePosition; limit: number },
) {
  return db
    .select()
    .from(ledgerEntries)
    .where(
      and(
        eq(ledgerEntries.creatorId, creatorId),
        olderThan(ledgerEntries.createdAt, ledgerEntries.id, options.after),
      ),
    )
    .orderBy(desc(ledgerEntries.createdAt), desc(ledgerEntries.id))
    .limit(options.limit);
}

export async function sweepPage(db: Db, creatorId: string, options: { after?: PagePosition; limit: number }) {
  return db
    .select()
    .from(payoutSweeps)
    .where(
      and(
        eq(payoutSweeps.creatorId, creatorId),
        olderThan(payoutSweeps.createdAt, payoutSweeps.id, options.after),
      ),
    )
    .orderBy(desc(payoutSweeps.createdAt), desc(payoutSweeps.id))
    .limit(options.limit);
}

/**
 * A payout the chain shows and the database had forgotten (a restore from an older backup):
 * recorded as sent, with its ledger debit, in one transaction; nothing when a sweep already names
 * the transfer (the unique index on `transaction` decides, whichever process gets there first).
 */
export async function insertRecoveredSweep(
  db: Db,
  row: { creatorId: string; address: string; amountMicro: bigint; transaction: string; at: Date },
): Promise<SweepRow | undefined> {
  return db.transaction(async (tx) => {
    const [sweep] = await tx
      .insert(payoutSweeps)
      .values({
        creatorId: row.creatorId,
        address: row.address,
        amountMicro: row.amountMicro,
        state: 'sent',
        transaction: row.transaction,
        createdAt: row.at,
        finishedAt: row.at,
      })
      .onConflictDoNothing()
      .returning();
    if (!sweep) return undefined;
    await tx.insert(ledgerEntries).values({
      creatorId: row.creatorId,
      kind: 'sweep',
      amountMicro: row.amountMicro,
      sweepId: sweep.id,
      createdAt: row.at,
    });
    return sweep;
  });
}

export async function sweepByTransaction(db: Db, transaction: string): Promise<SweepRow | undefined> {
  const [sweep] = await db.select().from(payoutSweeps).where(eq(payoutSweeps.transaction, transaction));
  return sweep;
}

export type UnresolvedTransferOut = typeof unresolvedTransfersOut.$inferSelect;

/**
 * Keeps a transfer out of `payTo` the database cannot attribute, once (its transaction is the key):
 * while it is unresolved the sweep pays nothing.
 */
export async function insertUnresolvedTransferOut(
  db: Db,
  row: { transaction: string; toAddress: string; amountMicro: bigint; at: Date; foundAt: Date },
): Promise<UnresolvedTransferOut | undefined> {
  const [inserted] = await db.insert(unresolvedTransfersOut).values(row).onConflictDoNothing().returning();
  return inserted;
}

export async function unresolvedTransferOut(
  db: Db,
  transaction: string,
): Promise<UnresolvedTransferOut | undefined> {
  const [row] = await db
    .select()
    .from(unresolvedTransfersOut)
    .where(eq(unresolvedTransfersOut.transaction, transaction));
  return row;
}

/** The transfers out still unresolved, oldest first: any one of them holds the payout sweep. */
export async function openTransfersOut(db: Db): Promise<UnresolvedTransferOut[]> {
  return db
    .select()
    .from(unresolvedTransfersOut)
    .where(isNull(unresolvedTransfersOut.resolution))
    .orderBy(asc(unresolvedTransfersOut.at));
}

/**
 * Resolves an open transfer out as `creatorId`'s payout: a `sent` sweep with its ledger debit and
 * the resolution, in one transaction. Undefined when it was not open (resolved meanwhile).
 */
export async function resolveTransferOutAsPayout(
  db: Db,
  transaction: string,
  creatorId: string,
  now: Date,
): Promise<{ transfer: UnresolvedTransferOut; sweep: SweepRow } | undefined> {
  return db.transaction(async (tx) => {
    const [open] = await tx
      .select()
      .from(unresolvedTransfersOut)
      .where(
        and(eq(unresolvedTransfersOut.transaction, transaction), isNull(unresolvedTransfersOut.resolution)),
      )
      .for('update');
    if (!open) return undefined;
    const [sweep] = await tx
      .insert(payoutSweeps)
      .values({
        creatorId,
        address: open.toAddress,
        amountMicro: open.amountMicro,
        state: 'sent',
        transaction: open.transaction,
        createdAt: open.at,
        finishedAt: open.at,
      })
      .returning();
    await tx.insert(ledgerEntries).values({
      creatorId,
      kind: 'sweep',
      amountMicro: open.amountMicro,
      sweepId: sweep!.id,
      createdAt: open.at,
    });
    const [transfer] = await tx
      .update(unresolvedTransfersOut)
      .set({ resolution: 'payout', creatorId, sweepId: sweep!.id, resolvedAt: now })
      .where(eq(unresolvedTransfersOut.transaction, transaction))
      .returning();
    return { transfer: transfer!, sweep: sweep! };
  });
}

/** Resolves an open transfer out as no payout (funds moved by the operator, say). */
export async function resolveTransferOutAsNotPayout(
  db: Db,
  transaction: string,
  reason: string,
  now: Date,
): Promise<UnresolvedTransferOut | undefined> {
  const [transfer] = await db
    .update(unresolvedTransfersOut)
    .set({ resolution: 'not_a_payout', reason, resolvedAt: now })
    .where(
      and(eq(unresolvedTransfersOut.transaction, transaction), isNull(unresolvedTransfersOut.resolution)),
    )
    .returning();
  return transfer;
}

/** Which of `transactions` the database knows: a payment's, a sweep's, or one kept for the operator. */
export async function knownTransactions(db: Db, transactions: string[]): Promise<Set<string>> {
  if (transactions.length === 0) return new Set();
  const lists = await Promise.all([
    db.select({ t: payments.transaction }).from(payments).where(inArray(payments.transaction, transactions)),
    db
      .select({ t: payoutSweeps.transaction })
      .from(payoutSweeps)
      .where(inArray(payoutSweeps.transaction, transactions)),
    db
      .select({ t: unresolvedTransfersOut.transaction })
      .from(unresolvedTransfersOut)
      .where(inArray(unresolvedTransfersOut.transaction, transactions)),
    db
      .select({ t: unattributedSales.transaction })
      .from(unattributedSales)
      .where(inArray(unattributedSales.transaction, transactions)),
  ]);
  return new Set(lists.flat().map(({ t }) => t!.toLowerCase()));
}

/**
 * The newest time this database knows the chain at: its checkpoint, its newest settled payment or
 * payout; failing those, its first creator (nothing can have been sold before); undefined when it
 * has no creator either.
 */
export async function newestChainKnowledge(db: Db): Promise<Date | undefined> {
  const [row] = await selectRows<{ at: Date | string | null }>(
    db,
    sql`select coalesce(greatest(
      (select max(${chainCheckpoint.at}) from ${chainCheckpoint}),
      (select max(${payments.settledAt}) from ${payments} where ${payments.state} = 'settled'),
      (select max(coalesce(${payoutSweeps.finishedAt}, ${payoutSweeps.createdAt})) from ${payoutSweeps}
        where ${payoutSweeps.transaction} is not null)
    ), (select min(created_at) from creators)) as at`,
  );
  return row?.at ? new Date(row.at) : undefined;
}

/** Moves the checkpoint forward to `block` (never back). */
export async function advanceChainCheckpoint(db: Db, block: bigint, at: Date, now: Date): Promise<void> {
  await db
    .insert(chainCheckpoint)
    .values({ id: 1, block, at, updatedAt: now })
    .onConflictDoUpdate({
      target: chainCheckpoint.id,
      set: { block, at, updatedAt: now },
      setWhere: sql`${chainCheckpoint.block} < ${block.toString()}::bigint`,
    });
}
