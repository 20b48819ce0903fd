import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import { isValidName } from '../identity/handles.js';
import { findPublicListing, type PublicListing } from '../listings/public-listings.js';
import { listingCacheSlot } from '../platform/caches.js';
import { latestPassingRelease, type Release } from '../releases/service.js';
import { type PricedListing, pricedListing } from './offer.js';

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
