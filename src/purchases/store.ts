import {
  type AnyColumn,
  and,
  asc,
  desc,
  eq,
  getTableColumns,
  gt,
  inArray,
  isNull,
  lt,
  ne,
  or,
  type SQL,
  sql,
} from 'drizzle-orm';
import type { Database, Db } from '../db/connect.js';
import { isUniqueViolation } from '../db/errors.js';
import {
  entitlements,
  type listings,
  payments,
  purchases,
  releases,
  unattributedSales,
} from '../db/schema/index.js';
import { columnList, fromColumns, type Statement, statement } from '../db/statement.js';
import { onShowSql, publicListingColumns } from '../listings/public-listings.js';

export type PaymentRow = typeof payments.$inferSelect;
export type PurchaseRow = typeof purchases.$inferSelect;
export type NewPurchase = typeof purchases.$inferInsert;

// The buy path's hot statements are written by hand and prepared once (`Database.run`): building
// them with Drizzle on every purchase was a fifth of a paid purchase's CPU (docs/DECISIONS.md, D-74).
// Rows that carry a table's columns select them with `columnList` and are decoded by the schema's
// columns (`fromColumns`), as the query builder would.

const purchaseColumns = getTableColumns(purchases);

// Payments

export async function findPayment(db: Db, asset: string, payer: string, nonce: string) {
  const [row] = await db
    .select()
    .from(payments)
    .where(and(eq(payments.asset, asset), eq(payments.payer, payer), eq(payments.nonce, nonce)));
  return row;
}

export async function findPaymentById(db: Db, id: string) {
  const [row] = await db.select().from(payments).where(eq(payments.id, id));
  return row;
}

/** What the wallet `$wallet` holds of the listing `$listing`: versions it is entitled to, and those bought with `all_versions`. */
function holdingColumns(wallet: string, listing: string): string {
  return `(select coalesce(json_agg(version), '[]') from entitlements where wallet = ${wallet}
      and listing_id = ${listing}) as versions,
    (select coalesce(json_agg(version), '[]') from purchases where wallet = ${wallet}
      and listing_id = ${listing} and all_versions) as "allVersions",
    (select coalesce(json_agg(e.version), '[]') from entitlements e join releases yr
      on yr.listing_id = e.listing_id and yr.version = e.version
      where e.wallet = ${wallet} and e.listing_id = ${listing} and yr.yanked_at is not null) as yanked`;
}

const READ_HOLDING = statement<{ versions: string[]; allVersions: string[]; yanked: string[] }>(
  'payments_holding',
  `select ${holdingColumns('$1', '$2::uuid')}`,
);

/** What `wallet` (lower case) holds of a listing. */
export async function readHolding(
  database: Database,
  wallet: string,
  listingId: string,
): Promise<{ versions: string[]; allVersions: string[]; yanked: string[] }> {
  const [row] = await database.run(READ_HOLDING, [wallet, listingId]);
  return row!;
}

/** A listing's public fields (`PublicListing`), read only for a listing on show (`onShowSql`). */
type ListingForSale = Pick<typeof listings.$inferSelect, keyof typeof publicListingColumns>;
// The release as a payment needs it, to grant it: the documents (scan, diff, changelog) stay unread.
const releaseTable = getTableColumns(releases);
const payingReleaseColumns = {
  id: releaseTable.id,
  listingId: releaseTable.listingId,
  version: releaseTable.version,
  artifactKey: releaseTable.artifactKey,
  artifactSha256: releaseTable.artifactSha256,
  sizeBytes: releaseTable.sizeBytes,
};
type PayingReleaseRow = Pick<typeof releases.$inferSelect, keyof typeof payingReleaseColumns>;

/** The id of the release on sale of the listing `alias`: its newest (by version) passing release. */
function releaseOnSaleId(alias: string): string {
  return `(select newest.id from releases newest
    where newest.listing_id = ${alias}.id and newest.verdict = 'pass' and newest.yanked_at is null
    order by newest.major desc, newest.minor desc, newest.patch desc limit 1)`;
}

const PAYMENT_HEAD = statement<Record<string, unknown>>(
  'payments_head',
  `select ${columnList('l', 'listing', publicListingColumns)}, ${columnList('r', 'release', payingReleaseColumns)},
    ${holdingColumns('$3', 'l.id')},
    (select id from payments where asset = $4 and payer = $3 and nonce = $5) as "paymentId"
  from listings l
  left join releases r on r.id = ${releaseOnSaleId('l')}
  where l.owner = $1 and l.slug = $2 and ${onShowSql('l')}`,
);

/**
 * Everything a paying request decides on, read afresh in one statement (one snapshot): the
 * listing `owner/slug`, its newest passing release, what `payer` (lower case) holds of it, and the
 * id of the payment row of the authorization (`asset`, `nonce`), if it has one. The rows are
 * decoded by the schema's own columns, as the query builder would.
 */
export async function readPaymentHead(
  database: Database,
  key: { owner: string; slug: string; asset: string; payer: string; nonce: string },
) {
  const [row] = await database.run(PAYMENT_HEAD, [key.owner, key.slug, key.payer, key.asset, key.nonce]);
  if (!row) return undefined;
  return {
    listing: fromColumns<ListingForSale>(row, 'listing', publicListingColumns)!,
    release: fromColumns<PayingReleaseRow>(row, 'release', payingReleaseColumns),
    versions: row.versions as string[],
    allVersions: row.allVersions as string[],
    yanked: row.yanked as string[],
    paymentId: (row.paymentId as string | null) ?? undefined,
  };
}

/** A payment row as the buy path inserts it: claimed for its first attempt (`settling`, leased). */
export type ClaimedPayment = Omit<
  PaymentRow,
  'id' | 'state' | 'transaction' | 'errorReason' | 'settledAt' | 'duplicate' | 'leaseUntil'
> & { state: 'settling'; leaseUntil: Date };

const PAYMENT_COLUMNS = `asset, payer, nonce, network, pay_to, amount_micro, listing_id, creator_id, version,
  kind, from_version, update_price_micro, source, payload, requirements, valid_before, state, lease_until, attempts,
  created_at, updated_at`;
const PAYMENT_VALUES = `$1, $2, $3, $4, $5, $6::numeric, $7::uuid, $8::uuid, $9, $10, $11, $12::numeric, $13,
  $14::jsonb, $15::jsonb, $16::timestamptz, $17, $18::timestamptz, $19::int, $20::timestamptz, $21::timestamptz`;

const INSERT_PAYMENT = statement<{ id: string }>(
  'payments_insert',
  `insert into payments (${PAYMENT_COLUMNS}) values (${PAYMENT_VALUES}) on conflict do nothing returning id`,
);

// A new buyer's row, written only while its offer still stands, checked by the insert itself: the
// listing published at the row's prices, `$22` its release on sale, and the payer holding nothing
// of it (so `new` is its kind, at the listing's price). No entitlement means no holding: every
// purchase, `all_versions` ones included, writes its entitlement with it, and none is deleted.
const INSERT_NEW_BUYER_PAYMENT = statement<{ id: string }>(
  'payments_insert_new_buyer',
  `insert into payments (${PAYMENT_COLUMNS}) select ${PAYMENT_VALUES}
  where $10 = 'new'
    and exists (select 1 from listings l where l.id = $7::uuid and l.creator_id = $8::uuid
      and l.status = 'published' and l.suspended_at is null and l.price_micro = $6::numeric and l.update_price_micro = $12::numeric
      and ${releaseOnSaleId('l')} = $22::uuid)
    and not exists (select 1 from entitlements where wallet = $2 and listing_id = $7::uuid)
  on conflict do nothing
  returning id`,
);

/**
 * The new row, or undefined when it cannot be written: the authorization has one already (the
 * replay guard), or another payment of its buyer holds the version's slot. Only the id is read
 * back; the rest of the row is what was written.
 */
export function insertPayment(database: Database, row: ClaimedPayment): Promise<PaymentRow | undefined> {
  return writePayment(database, INSERT_PAYMENT, row, []);
}

/**
 * The same for a new buyer's payment decided on a cached sale head: written only if, as the
 * insert runs, the listing is still published (and not suspended) at the row's prices, `releaseId` is still its
 * release on sale and the payer still holds none of it. Undefined when it is not written, for
 * that reason or one of `insertPayment`'s: the caller reads the listing afresh to learn which.
 */
export function insertNewBuyerPayment(
  database: Database,
  row: ClaimedPayment,
  releaseId: string,
): Promise<PaymentRow | undefined> {
  return writePayment(database, INSERT_NEW_BUYER_PAYMENT, row, [releaseId]);
}

async function writePayment(
  database: Database,
  insert: Statement<{ id: string }>,
  row: ClaimedPayment,
  conditions: string[],
): Promise<PaymentRow | undefined> {
  const [inserted] = await database.run(insert, [
    row.asset,
    row.payer,
    row.nonce,
    row.network,
    row.payTo,
    row.amountMicro,
    row.listingId,
    row.creatorId,
    row.version,
    row.kind,
    row.fromVersion,
    row.updatePriceMicro,
    row.source,
    JSON.stringify(row.payload),
    JSON.stringify(row.requirements),
    row.validBefore,
    row.state,
    row.leaseUntil,
    row.attempts,
    row.createdAt,
    row.updatedAt,
    ...conditions,
  ]);
  return (
    inserted && {
      ...row,
      id: inserted.id,
      transaction: null,
      errorReason: null,
      settledAt: null,
      duplicate: false,
    }
  );
}

/** The payment settling or settled for this buyer's purchase of `version`: its one slot. */
export async function findSlotHolder(db: Db, listingId: string, payer: string, version: string) {
  const [row] = await db
    .select()
    .from(payments)
    .where(
      and(
        eq(payments.listingId, listingId),
        eq(payments.payer, payer),
        eq(payments.version, version),
        inArray(payments.state, ['settling', 'settled']),
        eq(payments.duplicate, false),
      ),
    );
  return row;
}

export type Claim = { claimed: PaymentRow } | { busy: true } | { slotTaken: true };

/**
 * Takes the right to drive a payment's settlement until `leaseUntil`: only one request or job
 * calls `settle` for an authorization at a time. `busy` when another holds it or it settled;
 * `slotTaken` when the row had failed and another payment of its buyer for the same version is
 * now settling or settled (the unique index refuses a second one).
 */
export async function claimPayment(db: Db, id: string, now: Date, leaseUntil: Date): Promise<Claim> {
  try {
    const [row] = await db
      .update(payments)
      .set({ leaseUntil, state: 'settling', attempts: sql`${payments.attempts} + 1`, updatedAt: now })
      .where(
        and(
          eq(payments.id, id),
          inArray(payments.state, ['settling', 'failed']),
          or(isNull(payments.leaseUntil), lt(payments.leaseUntil, now)),
        ),
      )
      .returning();
    return row ? { claimed: row } : { busy: true };
  } catch (error) {
    if (isUniqueViolation(error)) return { slotTaken: true };
    throw error;
  }
}

/** Ends an attempt that did not settle; the row stays retryable. */
export async function releasePayment(
  db: Db,
  id: string,
  now: Date,
  outcome: { state: 'settling' | 'failed'; errorReason: string },
): Promise<void> {
  await db
    .update(payments)
    .set({
      state: outcome.state,
      errorReason: outcome.errorReason,
      leaseUntil: null,
      updatedAt: now,
    })
    .where(and(eq(payments.id, id), inArray(payments.state, ['settling', 'failed'])));
}

const RECORD_SETTLEMENT = statement<Record<string, unknown> & { duplicate: boolean }>(
  'payments_record_settlement',
  `with settled as (
    update payments set state = 'settled', "transaction" = $2, settled_at = $3::timestamptz,
      lease_until = null, error_reason = null, updated_at = $3::timestamptz,
      duplicate = duplicate or exists (select 1 from payments as other
        where other.listing_id = payments.listing_id and other.payer = payments.payer
          and other.version = payments.version and other.id <> payments.id
          and other.state in ('settling', 'settled') and not other.duplicate)
    where id = $1::uuid and state in ('settling', 'failed')
    returning id, listing_id, payer, version, kind, from_version, amount_micro, update_price_micro, source,
      creator_id, duplicate
  ), purchase as (
    insert into purchases (listing_id, wallet, version, kind, from_version, amount_micro, all_versions, source,
      payment_id, "transaction", created_at)
    select listing_id, payer, version, kind, from_version, amount_micro, update_price_micro = 0, source, id, $2,
      $3::timestamptz
    from settled
    returning *
  ), entitlement as (
    insert into entitlements (wallet, listing_id, version, purchase_id, created_at)
    select wallet, listing_id, version, id, created_at from purchase
    on conflict do nothing
  ), credit as (
    insert into ledger_entries (creator_id, kind, amount_micro, fee_micro, purchase_id, created_at)
    select settled.creator_id, 'credit', settled.amount_micro - $4::numeric, $4::numeric, purchase.id,
      $3::timestamptz
    from settled, purchase
    where settled.amount_micro - $4::numeric > 0
  )
  select ${columnList('purchase', 'purchase', purchaseColumns)}, settled.duplicate from purchase, settled`,
);

/**
 * Marks the payment settled and writes its purchase, the buyer's entitlement and the creator's
 * ledger credit (the amount less `feeMicro`, when anything is left), all in one statement, so
 * all of it happens or none does, in one round trip. Undefined when the payment was settled
 * already (someone else finished first). A failed row whose buyer has meanwhile paid for the
 * version with another authorization is still recorded, as a `duplicate`: the money arrived and
 * must be accounted for (and refunded).
 */
export async function recordSettled(
  database: Database,
  id: string,
  transaction: string,
  feeMicro: bigint,
  now: Date,
): Promise<{ purchase: PurchaseRow; duplicate: boolean } | undefined> {
  const [row] = await database.run(RECORD_SETTLEMENT, [id, transaction, now, feeMicro]);
  if (!row) return undefined;
  return { purchase: fromColumns<PurchaseRow>(row, 'purchase', purchaseColumns)!, duplicate: row.duplicate };
}

/** Rows left `settling` by a crash, a timeout or an ambiguous facilitator answer. */
export async function unresolvedPayments(db: Db, idleSince: Date, now: Date, limit: number) {
  return db
    .select()
    .from(payments)
    .where(
      and(
        eq(payments.state, 'settling'),
        lt(payments.updatedAt, idleSince),
        or(isNull(payments.leaseUntil), lt(payments.leaseUntil, now)),
      ),
    )
    .orderBy(asc(payments.updatedAt))
    .limit(limit);
}

/** Payments whose settlement is not decided yet: how many, and when the oldest was taken. */
export async function settlementBacklog(db: Db): Promise<{ count: number; oldest: Date | null }> {
  const [row] = await db
    .select({
      count: sql<number>`count(*)::int`,
      oldest: sql<Date | null>`min(${payments.createdAt})`.mapWith(payments.createdAt),
    })
    .from(payments)
    .where(eq(payments.state, 'settling'));
  return { count: row?.count ?? 0, oldest: row?.oldest ?? null };
}

/**
 * Failed rows whose authorization may still be executed (by its payer, or a broadcast we did not
 * hear of), so the chain is read once more for them; past `usableUntil` they stay failed.
 */
export async function recentlyFailedPayments(db: Db, idleSince: Date, usableAfter: Date, limit: number) {
  return db
    .select()
    .from(payments)
    .where(
      and(
        eq(payments.state, 'failed'),
        lt(payments.updatedAt, idleSince),
        gt(payments.validBefore, usableAfter),
        ne(payments.errorReason, 'expired_unsettled'),
      ),
    )
    .orderBy(asc(payments.updatedAt))
    .limit(limit);
}

/** Marks a failed row as looked at, so the reconciler takes the next ones first. */
export async function touchPayment(db: Db, id: string, now: Date): Promise<void> {
  await db.update(payments).set({ updatedAt: now }).where(eq(payments.id, id));
}

// Purchases and entitlements

export async function insertPurchase(db: Db, row: NewPurchase): Promise<PurchaseRow> {
  const [inserted] = await db.insert(purchases).values(row).returning();
  return inserted!;
}

export async function insertEntitlement(
  db: Db,
  row: { wallet: string; listingId: string; version: string; purchaseId: string; createdAt: Date },
): Promise<void> {
  await db.insert(entitlements).values(row).onConflictDoNothing();
}

export async function findPurchaseByPayment(db: Db, paymentId: string) {
  const [row] = await db.select().from(purchases).where(eq(purchases.paymentId, paymentId));
  return row;
}

/**
 * How many wallets acquired the listing whose id is `listingId` (a column of an outer query), paid
 * or free: a wallet's first purchase of a listing is its `new` one, later ones are updates.
 * Counted on `purchases_listing_buyers` alone.
 */
export function buyersOf(listingId: AnyColumn): SQL<number> {
  return sql<number>`(select count(*) from ${purchases} where ${purchases.listingId} = ${listingId} and ${purchases.kind} = 'new')`;
}

export interface EntitlementPosition {
  createdAt: Date;
  listingId: string;
  version: string;
}

/** A wallet's entitlements, newest first, after `cursor`. */
export async function entitlementPage(
  db: Db,
  wallet: string,
  after: EntitlementPosition | undefined,
  limit: number,
) {
  return db
    .select({
      listingId: entitlements.listingId,
      version: entitlements.version,
      createdAt: entitlements.createdAt,
      purchaseId: entitlements.purchaseId,
      kind: purchases.kind,
      allVersions: purchases.allVersions,
      transaction: purchases.transaction,
    })
    .from(entitlements)
    .innerJoin(purchases, eq(purchases.id, entitlements.purchaseId))
    .where(
      and(
        eq(entitlements.wallet, wallet),
        after
          ? sql`(${entitlements.createdAt}, ${entitlements.listingId}, ${entitlements.version}) < (${after.createdAt.toISOString()}::timestamptz, ${after.listingId}::uuid, ${after.version})`
          : undefined,
      ),
    )
    .orderBy(desc(entitlements.createdAt), desc(entitlements.listingId), desc(entitlements.version))
    .limit(limit);
}

// Ledger and payouts

/**
 * How many wallets hold a version of the listing, and how many of them bought while updates were
 * included (`all_versions`): those receive every later version free, whatever the update price.
 */
export async function holderCounts(
  db: Db,
  listingId: string,
): Promise<{ holders: number; updatesIncluded: number }> {
  // Every entitlement is written with its purchase, so the purchases name every holder.
  const [row] = await db
    .select({
      holders: sql<number>`count(distinct ${purchases.wallet})::int`,
      updatesIncluded: sql<number>`(count(distinct ${purchases.wallet}) filter (where ${purchases.allVersions}))::int`,
    })
    .from(purchases)
    .where(eq(purchases.listingId, listingId));
  return { holders: row?.holders ?? 0, updatesIncluded: row?.updatesIncluded ?? 0 };
}

// Sales recovered from the chain

/**
 * Block times are whole seconds and may trail this service's clock by a moment: a sale made right
 * as its release went on sale must still find it.
 */
const CHAIN_CLOCK_SLACK_MS = 2_000;

export interface ChainSaleCandidate {
  listingId: string;
  creatorId: string;
  version: string;
  kind: 'new' | 'update';
  fromVersion: string | null;
  updatePriceMicro: string;
}

/**
 * What a transfer of `amountMicro` from `payer` at `at` could have bought: each listing on sale
 * then whose release on sale then the payer does not hold, at the price its holdings made it
 * (the listing's price for a new buyer, its update price for a holder of an earlier version;
 * prices are today's, so a sale made before a price change matches nothing and is left to an
 * operator). An `all_versions` holder pays nothing more, so is no candidate.
 */
export async function chainSaleCandidates(
  database: Database,
  payer: string,
  amountMicro: bigint,
  at: Date,
): Promise<ChainSaleCandidate[]> {
  const { rows } = await database.query<ChainSaleCandidate>(
    `with held as (select listing_id, version from entitlements where wallet = $1)
    select l.id as "listingId", l.creator_id as "creatorId", r.version, l.update_price_micro::text as "updatePriceMicro",
      case when exists (select 1 from held where held.listing_id = l.id) then 'update' else 'new' end as kind,
      (select h.version from held h join releases hr on hr.listing_id = h.listing_id and hr.version = h.version
        where h.listing_id = l.id order by hr.major desc, hr.minor desc, hr.patch desc limit 1) as "fromVersion"
    from listings l
    join releases r on r.id = (select newest.id from releases newest
      where newest.listing_id = l.id and newest.verdict = 'pass' and newest.yanked_at is null and newest.on_sale_at <= $3::timestamptz
      order by newest.major desc, newest.minor desc, newest.patch desc limit 1)
    where l.published_at <= $3::timestamptz and (l.retired_at is null or l.retired_at > $3::timestamptz)
      and not exists (select 1 from held where held.listing_id = l.id and held.version = r.version)
      and not exists (select 1 from purchases p where p.wallet = $1 and p.listing_id = l.id and p.all_versions)
      and case when exists (select 1 from held where held.listing_id = l.id)
        then l.update_price_micro = $2::numeric and $2::numeric > 0
        else l.price_micro = $2::numeric end`,
    [payer, amountMicro.toString(), new Date(at.getTime() + CHAIN_CLOCK_SLACK_MS).toISOString()],
  );
  return rows;
}

/**
 * What an operator grants an unattributed sale as: `listingId` at `version` (its newest passing
 * release on sale at `at` when none is named), `new` for a payer holding nothing of it, else an
 * `update` from the newest version held. Undefined when that release does not exist or is not on
 * sale; `held` when the payer holds it already.
 */
export async function grantTarget(
  database: Database,
  payer: string,
  listingId: string,
  version: string | undefined,
  at: Date,
): Promise<(ChainSaleCandidate & { held: boolean }) | undefined> {
  const { rows } = await database.query<ChainSaleCandidate & { held: boolean }>(
    `with held as (select listing_id, version from entitlements where wallet = $1 and listing_id = $2::uuid)
    select l.id as "listingId", l.creator_id as "creatorId", r.version, l.update_price_micro::text as "updatePriceMicro",
      case when exists (select 1 from held) then 'update' else 'new' end as kind,
      (select h.version from held h join releases hr on hr.listing_id = h.listing_id and hr.version = h.version
        order by hr.major desc, hr.minor desc, hr.patch desc limit 1) as "fromVersion",
      (exists (select 1 from held where held.version = r.version)
        or exists (select 1 from purchases p where p.wallet = $1 and p.listing_id = l.id and p.all_versions)) as held
    from listings l
    join releases r on r.id = (select chosen.id from releases chosen
      where chosen.listing_id = l.id and chosen.verdict = 'pass' and chosen.on_sale_at is not null
        and case when $3::text is null then chosen.on_sale_at <= $4::timestamptz else chosen.version = $3::text end
      order by chosen.major desc, chosen.minor desc, chosen.patch desc limit 1)
    where l.id = $2::uuid`,
    [payer, listingId, version ?? null, new Date(at.getTime() + CHAIN_CLOCK_SLACK_MS).toISOString()],
  );
  return rows[0];
}

export type UnattributedSaleRow = typeof unattributedSales.$inferSelect;

export async function insertUnattributedSale(
  db: Db,
  row: Omit<UnattributedSaleRow, 'resolution' | 'paymentId' | 'note' | 'resolvedAt'>,
): Promise<UnattributedSaleRow | undefined> {
  const [inserted] = await db.insert(unattributedSales).values(row).onConflictDoNothing().returning();
  return inserted;
}

export async function findUnattributedSale(db: Db, transaction: string) {
  const [row] = await db
    .select()
    .from(unattributedSales)
    .where(eq(unattributedSales.transaction, transaction));
  return row;
}

/** Unresolved ones, oldest first. */
export async function openUnattributedSaleRows(db: Db): Promise<UnattributedSaleRow[]> {
  return db
    .select()
    .from(unattributedSales)
    .where(isNull(unattributedSales.resolution))
    .orderBy(asc(unattributedSales.at));
}

/** Closes an open one; undefined when it was not open (resolved meanwhile). */
export async function resolveUnattributedSale(
  db: Db,
  transaction: string,
  resolution: { resolution: 'granted'; paymentId: string } | { resolution: 'refunded'; note: string },
  now: Date,
): Promise<UnattributedSaleRow | undefined> {
  const [row] = await db
    .update(unattributedSales)
    .set({ ...resolution, resolvedAt: now })
    .where(and(eq(unattributedSales.transaction, transaction), isNull(unattributedSales.resolution)))
    .returning();
  return row;
}
