import type { Offer } from '../x402/offer.js';
import { type Holding, isEntitled, newestHeldBelow, owedReplacement } from './holdings.js';

/**
 * The one price computation: what a wallet is offered for a release now. Version status, the 402
 * and its quote, the purchase itself, the MCP tools and the label all take price and kind from
 * `offerFor`, so a buyer is never shown one price and quoted another.
 */

/** A listing that can be priced: publishing needs a price and a price cannot be cleared after. */
export interface PricedListing {
  id: string;
  owner: string;
  slug: string;
  priceMicro: bigint;
  updatePriceMicro: bigint;
}

/** The holder is entitled to the version already: nothing to pay. */
export interface Owned {
  kind: 'owned';
}

/** `price_kind` on the wire (version status): how a wallet would get the version now. */
export const PRICE_KINDS = ['owned', 'new', 'update', 'free'] as const;
export type PriceKind = (typeof PRICE_KINDS)[number];

/** Without a holding (an anonymous caller, the label): the new-buyer offer. */
export function offerFor(listing: PricedListing, version: string): Offer;
export function offerFor(
  listing: PricedListing,
  version: string,
  holding: Holding | undefined,
): Offer | Owned;
export function offerFor(listing: PricedListing, version: string, holding?: Holding): Offer | Owned {
  if (holding && isEntitled(holding, version)) return { kind: 'owned' };
  // A holder whose newest version was yanked gets the release on sale free, as an update from that
  // version even when the one on sale is older (docs/DECISIONS.md D-161).
  const replaced = holding ? owedReplacement(holding) : undefined;
  const fromVersion = holding ? (newestHeldBelow(holding, version) ?? replaced) : undefined;
  // The shared fields first, the kind's own spread in after them: on Node 20's V8 each field
  // written after a spread costs ~0.6 µs, and every 402 asks for an offer (docs/DECISIONS.md).
  return {
    listingId: listing.id,
    owner: listing.owner,
    slug: listing.slug,
    version,
    priceMicro: listing.priceMicro,
    updatePriceMicro: listing.updatePriceMicro,
    ...(fromVersion
      ? { kind: 'update', fromVersion, amountMicro: replaced ? 0n : listing.updatePriceMicro }
      : { kind: 'new', amountMicro: listing.priceMicro }),
  };
}

export function priceKind(offer: Offer | Owned): PriceKind {
  if (offer.kind === 'owned') return 'owned';
  return offer.amountMicro === 0n ? 'free' : offer.kind;
}

/** Narrows a public listing to a priced one; null when it has no price (not for sale: 404). */
export function pricedListing<L extends { priceMicro: bigint | null }>(
  listing: L | null | undefined,
): (L & { priceMicro: bigint }) | null {
  return listing && listing.priceMicro !== null ? (listing as L & { priceMicro: bigint }) : null;
}
