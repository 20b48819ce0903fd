/**
 * What the webhooks need to know of listings and holdings, handed down by the composition root
 * (src/runtime.ts builds it from listings and purchases): webhooks/ sits below every domain that
 * raises events, so it cannot import the ones that know who holds what.
 */
export interface WebhookAudience {
  /** A published or retired listing by its public name; undefined for drafts and unknown names. */
  findListing(owner: string, slug: string): Promise<{ id: string; owner: string; slug: string } | undefined>;
  /** The public name of a listing by id. */
  listingName(listingId: string): Promise<{ owner: string; slug: string } | undefined>;
  /** Whether `wallet` holds any version of the listing, or, with `version`, is entitled to that version. */
  holds(wallet: string, listingId: string, version?: string): Promise<boolean>;
}
