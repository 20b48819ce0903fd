/**
 * Every webhook event type (docs/WEBHOOKS.md describes each body). A holder's wallet may subscribe
 * to the holder events of the listings it holds; a creator to the creator events of its listings.
 * `release.yanked`, `listing.suspended` and `report.received` are raised by moderation (yanks,
 * suspensions, reports) through `enqueueWebhookEvent` like the rest.
 */
export const HOLDER_EVENTS = ['release.published', 'release.advisory', 'release.yanked'] as const;
export const CREATOR_EVENTS = [
  'sale',
  'release.cut',
  'release.scan_failed',
  'listing.suspended',
  'report.received',
] as const;

export type HolderEventType = (typeof HOLDER_EVENTS)[number];
export type CreatorEventType = (typeof CREATOR_EVENTS)[number];
export type WebhookEventType = HolderEventType | CreatorEventType;

/** Who hears an event: the listing's creator, or the wallets holding the listing (or one of its versions). */
export type Audience = 'creator' | 'holders';

export function audienceOf(type: WebhookEventType): Audience {
  return (HOLDER_EVENTS as readonly string[]).includes(type) ? 'holders' : 'creator';
}
