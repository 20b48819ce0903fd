import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import { isOnShow } from '../listings/public-listings.js';
import { type Listing, listingById, listingByName } from '../listings/service.js';
import { AppError } from '../platform/errors.js';
import { parseVersion } from '../platform/versions.js';
import { anyRelease } from '../releases/service.js';
import { announceWebhookEvents, enqueueWebhookEvent } from '../webhooks/events.js';
import type { ReportCategory, ReportReceipt } from './schemas.js';
import { recordAudit } from './service.js';
import { insertDomainEvent, insertReport, reportList, resolveReportRow } from './store.js';

/**
 * Reports: anyone may report a listing on show (no account), the creator hears of it (a domain
 * event, shown in their app), the operator lists and resolves them (`repo402 reports`).
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function reportedListing(db: Db, named: string): Promise<Listing | undefined> {
  if (UUID.test(named)) return listingById(db, named.toLowerCase());
  const [owner, slug, extra] = named.split('/');
  return owner && slug && extra === undefined ? listingByName(db, owner, slug) : undefined;
}

/** POST /api/reports. Drafts and unknown listings are both `404`, as everywhere public. */
export async function fileReport(
  ctx: Pick<AppContext, 'database' | 'clock' | 'jobs' | 'log'>,
  request: { listing: string; version?: string; category: ReportCategory; text: string },
): Promise<ReportReceipt> {
  const db = ctx.database.db;
  const listing = await reportedListing(db, request.listing);
  if (!listing || !isOnShow(listing)) throw new AppError('not_found', { message: 'No such listing' });
  if (request.version !== undefined) {
    const release = parseVersion(request.version)
      ? await anyRelease(db, listing.id, request.version)
      : undefined;
    if (!release)
      throw new AppError('not_found', { message: `No release ${request.version} of this listing` });
  }
  const name = `${listing.owner}/${listing.slug}`;
  const now = ctx.clock.now();
  const report = await db.transaction(async (tx) => {
    const row = await insertReport(tx, {
      listingId: listing.id,
      version: request.version ?? null,
      category: request.category,
      text: request.text,
      createdAt: now,
    });
    await insertDomainEvent(tx, {
      at: now,
      type: 'report.received',
      creatorId: listing.creatorId,
      listingId: listing.id,
      data: { report_id: row.id, listing: name, version: row.version, category: row.category },
    });
    await enqueueWebhookEvent(
      tx,
      {
        type: 'report.received',
        creatorId: listing.creatorId,
        listingId: listing.id,
        data: {
          listing: { id: listing.id, owner: listing.owner, slug: listing.slug },
          ...(row.version ? { version: row.version } : {}),
          category: row.category,
          at: now.toISOString(),
        },
      },
      now,
    );
    return row;
  });
  await announceWebhookEvents(ctx);
  return {
    id: report.id,
    listing: name,
    ...(report.version ? { version: report.version } : {}),
    category: report.category,
    received_at: report.createdAt.toISOString(),
  };
}

export interface ReportEntry {
  id: string;
  listing: string;
  version: string | null;
  category: string;
  text: string;
  created_at: string;
  resolved_at: string | null;
  resolution_note: string | null;
}

/** `repo402 reports list`: open reports (or all), newest first. */
export async function listReports(
  ctx: Pick<AppContext, 'database'>,
  options: { all: boolean },
): Promise<ReportEntry[]> {
  const rows = await reportList(ctx.database.db, { all: options.all, limit: 1000 });
  return rows.map(({ report, owner, slug }) => ({
    id: report.id,
    listing: `${owner}/${slug}`,
    version: report.version,
    category: report.category,
    text: report.text,
    created_at: report.createdAt.toISOString(),
    resolved_at: report.resolvedAt?.toISOString() ?? null,
    resolution_note: report.resolutionNote,
  }));
}

/** `repo402 reports resolve ID --note ...`: closes an open report, audited; the creator is told. */
export async function resolveReport(
  ctx: Pick<AppContext, 'database' | 'clock'>,
  request: { id: string; note: string },
): Promise<{ id: string; resolved_at: string }> {
  const db = ctx.database.db;
  const now = ctx.clock.now();
  const row = await db.transaction(async (tx) => {
    const resolved = await resolveReportRow(tx, request.id, now, request.note);
    if (!resolved) throw new AppError('not_found', { message: `No open report ${request.id}` });
    const listing = (await listingById(tx, resolved.listingId))!;
    await recordAudit(tx, now, 'report.resolve', request.id, request.note);
    await insertDomainEvent(tx, {
      at: now,
      type: 'report.resolved',
      creatorId: listing.creatorId,
      listingId: listing.id,
      data: {
        report_id: resolved.id,
        listing: `${listing.owner}/${listing.slug}`,
        category: resolved.category,
        note: request.note,
      },
    });
    return resolved;
  });
  return { id: row.id, resolved_at: now.toISOString() };
}
