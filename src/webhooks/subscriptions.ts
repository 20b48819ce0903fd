import { randomUUID } from 'node:crypto';
import type { AppContext } from '../context.js';
import { AppError } from '../platform/errors.js';
import { type HostLookup, refusedDestination, systemLookup } from './addresses.js';
import type { CreatorEventType, HolderEventType } from './catalogue.js';
import { newSigningSecret, sealSecret } from './secrets.js';
import {
  countSubscriptions,
  deleteSubscription,
  deliveryLog,
  insertSubscription,
  ownSubscription,
  type SubscriptionRow,
  subscriptionsOf,
} from './store.js';

/** Who owns a subscription: a creator (API key) or a holder's wallet (X-Wallet-Signature). */
export type Subscriber = { creatorId: string } | { wallet: string };

/** Enough for any receiver set-up; more is a runaway script. */
export const MAX_SUBSCRIPTIONS = 20;
const DELIVERY_LOG_ROWS = 100;

type SubscriptionContext = Pick<
  AppContext,
  'database' | 'clock' | 'config' | 'appSecret' | 'webhookAudience'
> & {
  webhookLookup?: HostLookup;
};

export interface SubscriptionView {
  row: SubscriptionRow;
  listing: { owner: string; slug: string } | null;
}

/**
 * Records a subscription after checking its URL (public addresses only, unless the development
 * setting allows others) and, for a holder limited to one listing, that the wallet holds it.
 * Returns the signing secret: it is shown this once.
 */
export async function subscribe(
  ctx: SubscriptionContext,
  subscriber: Subscriber,
  request: { url: string; events: Array<HolderEventType | CreatorEventType>; listing?: string },
): Promise<SubscriptionView & { secret: string }> {
  const url = new URL(request.url);
  const refused = await refusedDestination(url, {
    allowPrivate: ctx.config.webhooks.allowPrivateAddresses,
    lookup: ctx.webhookLookup ?? systemLookup,
  });
  if (refused) throw AppError.invalid([{ field: 'url', reason: refused }]);
  let listing: { id: string; owner: string; slug: string } | undefined;
  if ('wallet' in subscriber && request.listing) {
    const [owner, slug] = request.listing.split('/') as [string, string];
    listing = await ctx.webhookAudience.findListing(owner, slug);
    if (!listing) throw new AppError('not_found', { message: 'No such listing' });
    if (!(await ctx.webhookAudience.holds(subscriber.wallet, listing.id))) {
      throw new AppError('not_entitled', { message: 'This wallet holds no version of that listing' });
    }
  }
  if ((await countSubscriptions(ctx.database.db, subscriber)) >= MAX_SUBSCRIPTIONS) {
    throw AppError.invalid([
      { field: 'url', reason: `at most ${MAX_SUBSCRIPTIONS} subscriptions: delete one first` },
    ]);
  }
  const id = randomUUID();
  const secret = newSigningSecret();
  const row = await insertSubscription(ctx.database.db, {
    id,
    kind: 'creatorId' in subscriber ? 'creator' : 'holder',
    creatorId: 'creatorId' in subscriber ? subscriber.creatorId : null,
    wallet: 'wallet' in subscriber ? subscriber.wallet : null,
    listingId: listing?.id ?? null,
    url: url.toString(),
    events: [...new Set(request.events)].sort(),
    sealedSecret: sealSecret(ctx.appSecret, id, secret),
    createdAt: ctx.clock.now(),
  });
  return { row, listing: listing ? { owner: listing.owner, slug: listing.slug } : null, secret };
}

export async function listSubscriptions(
  ctx: SubscriptionContext,
  subscriber: Subscriber,
): Promise<SubscriptionView[]> {
  const rows = await subscriptionsOf(ctx.database.db, subscriber);
  return Promise.all(rows.map(async (row) => ({ row, listing: await listingOf(ctx, row) })));
}

async function listingOf(ctx: SubscriptionContext, row: SubscriptionRow) {
  return row.listingId ? ((await ctx.webhookAudience.listingName(row.listingId)) ?? null) : null;
}

/** Another subscriber's id is the same `404` as an unknown one. */
async function owned(ctx: SubscriptionContext, subscriber: Subscriber, id: string): Promise<SubscriptionRow> {
  const row = await ownSubscription(ctx.database.db, subscriber, id);
  if (!row) throw new AppError('not_found', { message: 'No such webhook subscription' });
  return row;
}

export async function unsubscribe(
  ctx: SubscriptionContext,
  subscriber: Subscriber,
  id: string,
): Promise<void> {
  await owned(ctx, subscriber, id);
  await deleteSubscription(ctx.database.db, id);
}

export async function deliveriesOf(ctx: SubscriptionContext, subscriber: Subscriber, id: string) {
  const row = await owned(ctx, subscriber, id);
  return { subscription: row, deliveries: await deliveryLog(ctx.database.db, id, DELIVERY_LOG_ROWS) };
}
