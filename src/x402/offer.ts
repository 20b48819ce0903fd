/** An offer to buy `version`: what a 402 asks, a quote signs and a payment row records. */
export interface Offer {
  listingId: string;
  owner: string;
  slug: string;
  version: string;
  kind: 'new' | 'update';
  /** The newest version held below `version`, which an update starts from. */
  fromVersion?: string;
  /** Zero is a free purchase, granted without a payment. */
  amountMicro: bigint;
  /** The listing's price in force (what a new buyer pays; the releases an update lists show it). */
  priceMicro: bigint;
  /** The update price in force: `0` makes a paid purchase `all_versions` (never a free claim). */
  updatePriceMicro: bigint;
}
