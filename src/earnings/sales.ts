import { z } from 'zod';
import type { PaymentsConfig } from '../config.js';
import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import { listingNamesById, ownedListing } from '../listings/service.js';
import { decodeCursor, encodeCursor } from '../platform/cursor.js';
import { holdersOf } from '../purchases/service.js';
import { creatorBalances, dailySales, ledgerPage, type PagePosition, salesPage, sweepPage } from './store.js';

/**
 * What a creator reads of its money (the web app's sales and payout pages): its sales, sales per
 * day, its ledger with the balance, and its payouts. Every read is the caller's own: a creator id
 * comes from the key, never from the request.
 */

const DEFAULT_PAGE_SIZE = 50;
const DEFAULT_DAYS = 30;

/** The explorer page of a transaction (`EXPLORER_TX_URL` with the hash for `{tx}`), if one is configured. */
export function transactionUrl(config: PaymentsConfig, transaction: string | null): string | null {
  if (!transaction || !config.explorerTxUrl) return null;
  return config.explorerTxUrl.replaceAll('{tx}', encodeURIComponent(transaction));
}

export interface PageOptions {
  cursor?: string;
  limit?: number;
}

const PageCursor = z.object({ t: z.iso.datetime(), id: z.uuid() });

function positionOf(cursor: string | undefined): PagePosition | undefined {
  if (cursor === undefined) return undefined;
  const position = decodeCursor(cursor, PageCursor);
  return { createdAt: new Date(position.t), id: position.id };
}

/** The first `limit` of rows read `limit + 1` at a time, and the cursor after them when more follow. */
function pageOf<T extends { createdAt: Date; id: string }>(rows: T[], limit: number) {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    page,
    nextCursor:
      rows.length > limit && last ? encodeCursor({ t: last.createdAt.toISOString(), id: last.id }) : null,
  };
}

/**
 * GET /api/creators/me/sales: paid purchases of the caller's listings, newest first. With
 * `listingId`, only that listing's, and `404 not_found` when it is not the caller's.
 */
export async function listSales(
  ctx: AppContext,
  creatorId: string,
  options: PageOptions & { listingId?: string },
) {
  const db = ctx.database.db;
  const limit = options.limit ?? DEFAULT_PAGE_SIZE;
  const after = positionOf(options.cursor);
  if (options.listingId) await ownedListing(db, creatorId, options.listingId);
  const { page, nextCursor } = pageOf(
    await salesPage(db, creatorId, { listingId: options.listingId, after, limit: limit + 1 }),
    limit,
  );
  const names = await listingNamesById(
    db,
    page.map((sale) => sale.listingId),
  );
  return {
    sales: page.map((sale) => ({
      ...sale,
      // Every purchase's listing exists: the foreign key keeps listing rows.
      listing: { id: sale.listingId, ...names.get(sale.listingId)! },
      transactionUrl: transactionUrl(ctx.config.payments, sale.transaction),
    })),
    nextCursor,
  };
}

/** GET /api/creators/me/sales/daily: `days` UTC days ending today by the server's clock, oldest first. */
export async function salesPerDay(ctx: AppContext, creatorId: string, days = DEFAULT_DAYS) {
  const now = ctx.clock.now();
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const first = new Date(today - (days - 1) * 86_400_000).toISOString().slice(0, 10);
  return dailySales(ctx.database.db, creatorId, first, days);
}

/** GET /api/creators/me/ledger: the balance over every entry, and a page of entries, newest first. */
export async function creatorLedger(db: Db, creatorId: string, options: PageOptions) {
  const limit = options.limit ?? DEFAULT_PAGE_SIZE;
  const after = positionOf(options.cursor);
  const [totals] = await creatorBalances(db, creatorId);
  const { page, nextCursor } = pageOf(await ledgerPage(db, creatorId, { after, limit: limit + 1 }), limit);
  return {
    balanceMicro: totals?.balanceMicro ?? 0n,
    creditedMicro: totals?.creditedMicro ?? 0n,
    sweptMicro: totals?.sweptMicro ?? 0n,
    entries: page,
    nextCursor,
  };
}

/** GET /api/creators/me/payouts: the caller's payout sweeps, newest first. */
export async function listPayouts(ctx: AppContext, creatorId: string, options: PageOptions) {
  const limit = options.limit ?? DEFAULT_PAGE_SIZE;
  const after = positionOf(options.cursor);
  const { page, nextCursor } = pageOf(
    await sweepPage(ctx.database.db, creatorId, { after, limit: limit + 1 }),
    limit,
  );
  return {
    payouts: page.map(({ rawTransaction: _signedBytes, ...sweep }) => ({
      ...sweep,
      transactionUrl: transactionUrl(ctx.config.payments, sweep.transaction),
    })),
    nextCursor,
  };
}

/** Who holds the caller's listing: every wallet with a version, and those whose updates are included. */
export async function listingHolders(ctx: AppContext, creatorId: string, listingId: string) {
  const listing = await ownedListing(ctx.database.db, creatorId, listingId);
  return { listingId: listing.id, ...(await holdersOf(ctx, listing.id)) };
}
