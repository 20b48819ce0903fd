import os from 'node:os';
import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import { creatorByHandle, setCreatorSuspended as setCreatorSuspension } from '../identity/creators.js';
import {
  type Listing,
  listingByName,
  listingsOfCreator,
  suspendListing as suspendListingRow,
  unsuspendListing as unsuspendListingRow,
} from '../listings/service.js';
import { AppError } from '../platform/errors.js';
import { parseVersion } from '../platform/versions.js';
import { latestPassingRelease, markOnSale, setYank } from '../releases/service.js';
import { announceWebhookEvents, enqueueWebhookEvent } from '../webhooks/events.js';
import { type AuditRow, auditPage, insertAudit, insertDomainEvent } from './store.js';

/**
 * The operator's moderation actions (`repo402 releases yank`, `listings suspend`, `creators
 * suspend` and their reversal). Each one changes its rows, writes its audit entry and the domain
 * event its creator (and, for a yank, its holders) hear of, in one transaction; then every
 * process drops its cached documents of the listings it touched.
 */

type Ctx = Pick<AppContext, 'database' | 'clock' | 'listingEvents' | 'jobs' | 'log' | 'config'>;

/** What the operator types after `--reason`: a sentence, kept as given. */
export const REASON_MAX_LENGTH = 500;

async function namedListing(db: Db, named: string): Promise<Listing> {
  const [owner, slug, extra] = named.split('/');
  const listing = owner && slug && extra === undefined ? await listingByName(db, owner, slug) : undefined;
  if (!listing) throw new AppError('not_found', { message: `No listing ${named} (expected OWNER/SLUG)` });
  return listing;
}

function audit(db: Db, at: Date, action: string, subject: string, reason: string): Promise<AuditRow> {
  return insertAudit(db, { at, action, subject, reason, host: os.hostname() });
}

export interface YankResult {
  listing: string;
  version: string;
  yanked: boolean;
}

/** Yanks (or, with `undo`, restores) one release of `OWNER/SLUG`. */
export async function setReleaseYanked(
  ctx: Ctx,
  request: { listing: string; version: string; reason: string; undo?: boolean },
): Promise<YankResult> {
  const db = ctx.database.db;
  const listing = await namedListing(db, request.listing);
  const { version } = request;
  if (!parseVersion(version))
    throw new AppError('not_found', { message: `No version ${version} (expected X.Y.Z)` });
  const name = `${listing.owner}/${listing.slug}`;
  const now = ctx.clock.now();
  await db.transaction(async (tx) => {
    const changed = await setYank(
      tx,
      listing.id,
      version,
      request.undo ? null : { at: now, reason: request.reason },
    );
    if (!changed) {
      throw new AppError('not_found', {
        message: `${name} has no release ${version} ${request.undo ? 'that is yanked' : 'that is not yanked already'}`,
      });
    }
    await audit(
      tx,
      now,
      request.undo ? 'release.unyank' : 'release.yank',
      `${name}@${version}`,
      request.reason,
    );
    // Another release may be the one on sale now (the next passing one down, or this one again).
    await markOnSale(tx, listing.id, now);
    await insertDomainEvent(tx, {
      at: now,
      type: request.undo ? 'release.unyanked' : 'release.yanked',
      creatorId: listing.creatorId,
      listingId: listing.id,
      data: { listing: name, version, reason: request.reason },
    });
    if (!request.undo) {
      // Its holders' webhooks: what they may fetch free instead (docs/WEBHOOKS.md).
      const onSale = await latestPassingRelease(tx, listing.id);
      await enqueueWebhookEvent(
        tx,
        {
          type: 'release.yanked',
          creatorId: listing.creatorId,
          listingId: listing.id,
          version,
          data: {
            listing: { id: listing.id, owner: listing.owner, slug: listing.slug },
            version,
            reason: request.reason,
            at: now.toISOString(),
            free_version: onSale?.version ?? null,
            resource_url: `${ctx.config.baseUrl}/api/r/${listing.owner}/${listing.slug}`,
          },
        },
        now,
      );
    }
  });
  ctx.listingEvents.announce(listing.owner, listing.slug);
  if (!request.undo) await announceWebhookEvents(ctx);
  return { listing: name, version, yanked: !request.undo };
}

/** The creator's `listing.suspended` webhook, in the suspension's transaction. */
function suspendedWebhook(
  db: Db,
  listing: { id: string; owner: string; slug: string; creatorId: string },
  reason: string,
  at: Date,
) {
  return enqueueWebhookEvent(
    db,
    {
      type: 'listing.suspended',
      creatorId: listing.creatorId,
      listingId: listing.id,
      data: {
        listing: { id: listing.id, owner: listing.owner, slug: listing.slug },
        reason,
        at: at.toISOString(),
      },
    },
    at,
  );
}

export interface SuspendResult {
  subject: string;
  suspended: boolean;
  /** The listings whose suspension changed with it. */
  listings: string[];
}

/** Suspends (or, with `undo`, lifts the suspension of) one listing, `OWNER/SLUG`. */
export async function setListingSuspended(
  ctx: Ctx,
  request: { listing: string; reason: string; undo?: boolean },
): Promise<SuspendResult> {
  const db = ctx.database.db;
  const listing = await namedListing(db, request.listing);
  const name = `${listing.owner}/${listing.slug}`;
  if (request.undo && listing.suspendedBy === 'creator') {
    throw new AppError('suspended', {
      message: `${name} is suspended because its creator ${listing.owner} is: repo402 creators unsuspend ${listing.owner}`,
    });
  }
  const now = ctx.clock.now();
  await db.transaction(async (tx) => {
    const changed = request.undo
      ? await unsuspendListingRow(tx, listing.id, 'listing')
      : await suspendListingRow(tx, listing.id, { at: now, reason: request.reason, by: 'listing' });
    if (!changed) {
      throw new AppError('not_found', {
        message: `${name} is ${request.undo ? 'not suspended' : 'suspended already'}`,
      });
    }
    await audit(tx, now, request.undo ? 'listing.unsuspend' : 'listing.suspend', name, request.reason);
    await insertDomainEvent(tx, {
      at: now,
      type: request.undo ? 'listing.unsuspended' : 'listing.suspended',
      creatorId: listing.creatorId,
      listingId: listing.id,
      data: { listing: name, reason: request.reason },
    });
    if (!request.undo) await suspendedWebhook(tx, listing, request.reason, now);
  });
  ctx.listingEvents.announce(listing.owner, listing.slug);
  if (!request.undo) await announceWebhookEvents(ctx);
  return { subject: name, suspended: !request.undo, listings: [name] };
}

/**
 * Suspends (or lifts) a creator by handle: they cannot push, publish or sign in, and each of their
 * listings not suspended on its own is suspended with them (and lifted with them).
 */
export async function setCreatorSuspended(
  ctx: Ctx,
  request: { handle: string; reason: string; undo?: boolean },
): Promise<SuspendResult> {
  const db = ctx.database.db;
  const creator = await creatorByHandle(db, request.handle);
  if (!creator) throw new AppError('not_found', { message: `No creator ${request.handle}` });
  const now = ctx.clock.now();
  const touched = await db.transaction(async (tx) => {
    const changed = await setCreatorSuspension(
      tx,
      creator.id,
      request.undo ? null : { at: now, reason: request.reason },
    );
    if (!changed) {
      throw new AppError('not_found', {
        message: `${creator.handle} is ${request.undo ? 'not suspended' : 'suspended already'}`,
      });
    }
    await audit(
      tx,
      now,
      request.undo ? 'creator.unsuspend' : 'creator.suspend',
      creator.handle,
      request.reason,
    );
    const names: Array<{ owner: string; slug: string }> = [];
    for (const listing of await listingsOfCreator(tx, creator.id)) {
      const listingChanged = request.undo
        ? await unsuspendListingRow(tx, listing.id, 'creator')
        : await suspendListingRow(tx, listing.id, { at: now, reason: request.reason, by: 'creator' });
      if (!listingChanged) continue;
      names.push(listing);
      // Each listing's own event too: a subscriber to `listing.suspended` hears of it either way.
      await insertDomainEvent(tx, {
        at: now,
        type: request.undo ? 'listing.unsuspended' : 'listing.suspended',
        creatorId: creator.id,
        listingId: listing.id,
        data: { listing: `${listing.owner}/${listing.slug}`, reason: request.reason, by: 'creator' },
      });
      if (!request.undo) {
        await suspendedWebhook(tx, { ...listing, creatorId: creator.id }, request.reason, now);
      }
    }
    await insertDomainEvent(tx, {
      at: now,
      type: request.undo ? 'creator.unsuspended' : 'creator.suspended',
      creatorId: creator.id,
      data: {
        handle: creator.handle,
        reason: request.reason,
        listings: names.map((l) => `${l.owner}/${l.slug}`),
      },
    });
    return names;
  });
  for (const listing of touched) ctx.listingEvents.announce(listing.owner, listing.slug);
  if (!request.undo && touched.length > 0) await announceWebhookEvents(ctx);
  return {
    subject: creator.handle,
    suspended: !request.undo,
    listings: touched.map((l) => `${l.owner}/${l.slug}`),
  };
}

export interface AuditEntry {
  id: number;
  at: string;
  action: string;
  subject: string;
  reason: string;
  host: string;
}

/** The audit log, oldest first, a page after `after`. */
export async function auditEntries(
  ctx: Pick<AppContext, 'database'>,
  after = 0,
  limit = 1000,
): Promise<AuditEntry[]> {
  const rows = await auditPage(ctx.database.db, after, limit);
  return rows.map((row) => ({
    id: row.id,
    at: row.at.toISOString(),
    action: row.action,
    subject: row.subject,
    reason: row.reason,
    host: row.host,
  }));
}

export { audit as recordAudit };
