import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import {
  assertListingNotSuspended,
  type Listing,
  listingById,
  liveOwnedListing,
  markPublished,
  retiredError,
} from '../listings/service.js';
import { AppError } from '../platform/errors.js';
import { logEvent } from '../platform/events.js';
import { latestPassingRelease, newestAnyRelease } from './service.js';
import { computedParts, markOnSale } from './store.js';

/** What the analysis records about overlap with other listings (SPEC.md `computed.originality`). */
async function derivativeOf(db: Db, releaseId: string): Promise<string | null> {
  const originality = (await computedParts(db, [releaseId], 'originality')).get(releaseId) as
    | { derivative_of?: unknown }
    | null
    | undefined;
  return typeof originality?.derivative_of === 'string' ? originality.derivative_of : null;
}

/**
 * `draft` → `published` (DESIGN.md item 5). Refusals, in this order: `description_missing`,
 * `scan_failed` (no passing release and the newest failed), `derivative_of` (the release on sale
 * overlaps another listing by 90 % or more), then `listing_not_ready` naming every missing item.
 * `description_missing` names those missing items too (`blocking`), so the first refusal of an
 * empty draft lists every item it lacks (a failed scan or a derivative is still answered after).
 * Publishing a published listing answers it unchanged.
 */
export async function publishOwnListing(ctx: AppContext, creatorId: string, id: string): Promise<Listing> {
  const db = ctx.database.db;
  const listing = await liveOwnedListing(db, creatorId, id);
  assertListingNotSuspended(listing);
  if (listing.status === 'published') return listing;
  const missing = [
    ...(listing.description.trim() ? [] : ['description']),
    ...(listing.triggerHint.trim() ? [] : ['trigger_hint']),
  ];
  const latest = await latestPassingRelease(db, id);
  const blocking = [
    ...(latest ? [] : ['passing_release']),
    ...(listing.priceMicro === null ? ['price'] : []),
  ];
  if (missing.length > 0) {
    const also = blocking.length > 0 ? `; also missing: ${blocking.join(', ')}` : '';
    throw new AppError('description_missing', {
      message: `Set ${missing.join(' and ')} (PATCH /api/listings/{id}) before publishing${also}`,
      details: blocking.length > 0 ? { missing, blocking } : { missing },
    });
  }
  if (!latest) {
    const newest = await newestAnyRelease(db, id);
    if (newest?.verdict === 'fail') {
      throw new AppError('scan_failed', {
        message: `Release ${newest.version} failed its scan; read scan_report on GET /api/listings/{id}, fix it and cut a new version`,
        details: { version: newest.version },
      });
    }
  } else {
    const original = await derivativeOf(db, latest.id);
    if (original) {
      throw new AppError('derivative_of', {
        message: `Release ${latest.version} overlaps ${original} by 90% or more; it cannot be published`,
        details: { derivative_of: original, version: latest.version },
      });
    }
  }
  if (blocking.length > 0) {
    throw new AppError('listing_not_ready', {
      message: `Not ready to publish; missing: ${blocking.join(', ')}`,
      details: { blocking },
    });
  }
  const published = await db.transaction(async (tx) => {
    const row = await markPublished(tx, id, ctx.clock.now());
    if (row) await markOnSale(tx, id, ctx.clock.now());
    return row;
  });
  if (published) {
    logEvent(ctx.log, 'listing.published', {
      listing_id: id,
      listing: `${published.owner}/${published.slug}`,
    });
    ctx.listingEvents.announce(published.owner, published.slug);
    return published;
  }
  // A concurrent publish or retire won the race: answer the state it left.
  const current = await listingById(db, id);
  if (current?.status === 'published') return current;
  throw retiredError();
}
