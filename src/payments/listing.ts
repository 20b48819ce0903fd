import type { Db } from '../db/connect.js';
import { isValidName } from '../identity/handles.js';
import { findPublicListing, type PublicListing } from '../listings/public-listings.js';

/**
 * The public listing `owner/slug`, or null. Names that no listing can have (wrong characters, a
 * NUL byte from an MCP caller) are null without a query.
 */
export function findListingForSale(db: Db, owner: string, slug: string): Promise<PublicListing | null> {
  if (!isValidName(owner) || !isValidName(slug)) return Promise.resolve(null);
  return findPublicListing(db, owner, slug);
}
