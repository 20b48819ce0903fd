import type { AppContext } from '../context.js';
import type { Database, Db } from '../db/connect.js';
import { isValidName } from '../identity/handles.js';
import { findPublicListing, type PublicListing } from '../listings/public-listings.js';
import { listingCacheSlot } from '../platform/cache/caches.js';
import { latestPassingRelease, type Release } from '../releases/service.js';
import type { GrantableRelease } from './grants.js';
import { type Holding, holdingFrom } from './holdings.js';
import { type PricedListing, pricedListing } from './pricing.js';
import { readPaymentHead } from './store.js';

/**
 * The public listing `owner/slug`, or null. Names that no listing can have (wrong characters, a
 * NUL byte from an MCP caller) are null without a query.
 */
export function findListingForSale(db: Db, owner: string, slug: string): Promise<PublicListing | null> {
  if (!isValidName(owner) || !isValidName(slug)) return Promise.resolve(null);
  return findPublicListing(db, owner, slug);
}

/** A priced public listing and the release on sale: what the read paths offer. */
export interface SaleHead {
  listing: PublicListing & PricedListing;
  release: Release;
}

const saleHeads = listingCacheSlot<{ head: SaleHead | null }>({
  max: 10_000,
  ttlMs: 1000,
  keyedByListing: true,
});

/**
 * The listing and its release on sale, read afresh: the paying request decides on these.
 * Null when either is missing (unknown, unpriced, nothing passed).
 */
export async function readSaleHead(db: Db, owner: string, slug: string): Promise<SaleHead | null> {
  const listing = pricedListing(await findListingForSale(db, owner, slug));
  const release = listing && (await latestPassingRelease(db, listing.id));
  return listing && release ? { listing, release } : null;
}

/**
 * What a paying request decides on: the listing and the release on sale (what granting it reads),
 * the payer's holding, its authorization's row.
 */
export interface PayingHead {
  listing: SaleHead['listing'];
  release: GrantableRelease;
  holding: Holding;
  /** The payment row of the authorization being paid with, when it has one. */
  paymentId?: string;
}

/**
 * The sale head as `readSaleHead` reads it, with what `payer` (lower case) holds of the listing
 * and the id of the authorization's payment row, in one statement. Holding and row share one
 * snapshot: a purchase is written after its payment row, so a holding that came from this very
 * authorization is always seen with its row (and answered as a replay).
 */
export async function readPayingHead(
  database: Database,
  owner: string,
  slug: string,
  authorization: { asset: string; payer: string; nonce: string },
): Promise<PayingHead | null> {
  if (!isValidName(owner) || !isValidName(slug)) return null;
  const row = await readPaymentHead(database, { owner, slug, ...authorization });
  // The statement reads only a listing on show, never a draft.
  if (!row || row.listing.status === 'draft') return null;
  const listing = pricedListing({ ...row.listing, status: row.listing.status });
  // A passing release always has its zip (the releases table's check `releases_artifact_whole`).
  const release = row.release as GrantableRelease | null;
  if (!listing || !release) return null;
  return { listing, release, holding: holdingFrom(row), paymentId: row.paymentId ?? undefined };
}

/**
 * The same, for requests that only read (the 402, version status, the MCP listing tools): from the
 * context's cache, dropped in every process when the listing changes (`ctx.listingEvents`) and
 * never older than a second. A price change is therefore never quoted by this process after it
 * was made; the paying request compares its quote with `readSaleHead`, so a stale quote from
 * another process is answered `price_changed`, never charged.
 */
export async function cachedSaleHead(ctx: AppContext, owner: string, slug: string): Promise<SaleHead | null> {
  const entry = await ctx.caches
    .get(saleHeads)
    .get(`${owner}/${slug}`, async () => ({ head: await readSaleHead(ctx.database.db, owner, slug) }));
  return entry.head;
}
