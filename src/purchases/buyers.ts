import type { Db } from '../db/connect.js';
import { listShownListings, type ShowcaseQuery, type ShownListing } from '../listings/catalog.js';
import { buyersOf } from './store.js';

/** A listing on show with its buyers: the wallets that acquired it, paid or free. */
export type ShownListingWithBuyers = Omit<ShownListing, 'count'> & { buyers: number };

/**
 * One page of the listings on show (the home page), each with its buyers, newest published first
 * or most bought first: one query, the catalogue's, counting buyers on an index of purchases.
 */
export async function listingsOnShow(
  db: Db,
  query: Omit<ShowcaseQuery, 'count' | 'order'> & { order: 'newest' | 'most_bought' },
): Promise<ShownListingWithBuyers[]> {
  const rows = await listShownListings(db, {
    ...query,
    count: buyersOf,
    order: query.order === 'most_bought' ? 'count' : 'newest',
  });
  return rows.map(({ count, ...listing }) => ({ ...listing, buyers: count }));
}
