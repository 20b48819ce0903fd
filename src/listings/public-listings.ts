import type { Db } from '../db/connect.js';
import { listings } from '../db/schema/index.js';
import { isValidName } from '../identity/handles.js';
import { findListingByOwnerSlug, type ListingRow } from './store.js';

/** A listing as public routes see it: published or retired, never a draft. */
export interface PublicListing {
  id: string;
  owner: string;
  slug: string;
  creatorId: string;
  status: 'published' | 'retired';
  priceMicro: bigint | null;
  updatePriceMicro: bigint;
  description: string;
  triggerHint: string;
  licence: string | null;
  /** Set while the operator suspends the listing (or its creator): nothing is sold. */
  suspendedAt: Date | null;
  suspensionReason: string | null;
}

/** The columns a `PublicListing` is read from, for queries that select it beside other rows. */
export const publicListingColumns = {
  id: listings.id,
  owner: listings.owner,
  slug: listings.slug,
  creatorId: listings.creatorId,
  status: listings.status,
  priceMicro: listings.priceMicro,
  updatePriceMicro: listings.updatePriceMicro,
  description: listings.description,
  triggerHint: listings.triggerHint,
  licence: listings.licence,
  suspendedAt: listings.suspendedAt,
  suspensionReason: listings.suspensionReason,
};

/**
 * Shown by name: published, or retired after it was (its holders keep the manifest and release
 * log). A draft is never shown, nor a draft retired without ever being published: nothing of it
 * was ever public. The same rule for a row in hand and, as SQL over a listings row `alias`, for
 * queries that filter by it.
 */
export function isOnShow<R extends Pick<ListingRow, 'status' | 'publishedAt'>>(
  row: R,
): row is R & { status: PublicListing['status'] } {
  return row.status === 'published' || (row.status === 'retired' && row.publishedAt !== null);
}

export function onShowSql(alias: string): string {
  return `(${alias}.status = 'published' or (${alias}.status = 'retired' and ${alias}.published_at is not null))`;
}

/** `owner/slug` when it may be shown publicly (`isOnShow`); otherwise, and for unknown names, null (404). */
export async function findPublicListing(db: Db, owner: string, slug: string): Promise<PublicListing | null> {
  if (!isValidName(owner) || !isValidName(slug)) return null;
  const row = await findListingByOwnerSlug(db, owner, slug);
  if (!row || !isOnShow(row)) return null;
  return publicFields(row, row.status);
}

/**
 * A listing as public routes will show it once it is on show: a draft as it would be published.
 * Only for its own creator's previews (GET /api/listings/{id}/manifest); a draft stays unreadable
 * by name.
 */
export function asShownPublicly(listing: ListingRow): PublicListing {
  return publicFields(listing, listing.status === 'draft' ? 'published' : listing.status);
}

function publicFields(row: ListingRow, status: PublicListing['status']): PublicListing {
  return {
    id: row.id,
    owner: row.owner,
    slug: row.slug,
    creatorId: row.creatorId,
    status,
    priceMicro: row.priceMicro,
    updatePriceMicro: row.updatePriceMicro,
    description: row.description,
    triggerHint: row.triggerHint,
    licence: row.licence,
    suspendedAt: row.suspendedAt,
    suspensionReason: row.suspensionReason,
  };
}
