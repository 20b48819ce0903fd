import { and, asc, desc, eq, gt, isNotNull, isNull, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { auditLog, creators, domainEvents, listings, releases, reports } from '../db/schema/index.js';

export type AuditRow = typeof auditLog.$inferSelect;
export type DomainEventRow = typeof domainEvents.$inferSelect;
export type ReportRow = typeof reports.$inferSelect;

export async function insertAudit(db: Db, row: typeof auditLog.$inferInsert): Promise<AuditRow> {
  const [inserted] = await db.insert(auditLog).values(row).returning();
  return inserted!;
}

export async function insertDomainEvent(db: Db, row: typeof domainEvents.$inferInsert): Promise<void> {
  await db.insert(domainEvents).values(row);
}

/** The audit log, oldest first, after the entry `afterId`. */
export function auditPage(db: Db, afterId: number, limit: number): Promise<AuditRow[]> {
  return db.select().from(auditLog).where(gt(auditLog.id, afterId)).orderBy(asc(auditLog.id)).limit(limit);
}

/** A creator's newest domain events, newest first. */
export function recentEventsOf(db: Db, creatorId: string, limit: number): Promise<DomainEventRow[]> {
  return db
    .select()
    .from(domainEvents)
    .where(eq(domainEvents.creatorId, creatorId))
    .orderBy(desc(domainEvents.id))
    .limit(limit);
}

/** Marks the release yanked unless it is already; the row as yanked, or undefined. */
export async function setYank(
  db: Db,
  listingId: string,
  version: string,
  yank: { at: Date; reason: string } | null,
): Promise<{ id: string } | undefined> {
  const [row] = await db
    .update(releases)
    .set({ yankedAt: yank?.at ?? null, yankReason: yank?.reason ?? null })
    .where(
      and(
        eq(releases.listingId, listingId),
        eq(releases.version, version),
        yank ? isNull(releases.yankedAt) : isNotNull(releases.yankedAt),
      ),
    )
    .returning({ id: releases.id });
  return row;
}

/** Suspends the listing unless it is suspended already; true when it changed. */
export async function suspendListingRow(
  db: Db,
  listingId: string,
  suspension: { at: Date; reason: string; by: 'listing' | 'creator' },
): Promise<boolean> {
  const rows = await db
    .update(listings)
    .set({ suspendedAt: suspension.at, suspensionReason: suspension.reason, suspendedBy: suspension.by })
    .where(and(eq(listings.id, listingId), isNull(listings.suspendedAt)))
    .returning({ id: listings.id });
  return rows.length > 0;
}

/** Lifts a listing's suspension set by `by`; true when it changed. */
export async function unsuspendListingRow(
  db: Db,
  listingId: string,
  by: 'listing' | 'creator',
): Promise<boolean> {
  const rows = await db
    .update(listings)
    .set({ suspendedAt: null, suspensionReason: null, suspendedBy: null })
    .where(and(eq(listings.id, listingId), eq(listings.suspendedBy, by)))
    .returning({ id: listings.id });
  return rows.length > 0;
}

export function listingsOfCreator(db: Db, creatorId: string) {
  return db
    .select({ id: listings.id, owner: listings.owner, slug: listings.slug })
    .from(listings)
    .where(eq(listings.creatorId, creatorId));
}

export async function setCreatorSuspension(
  db: Db,
  creatorId: string,
  suspension: { at: Date; reason: string } | null,
): Promise<boolean> {
  const rows = await db
    .update(creators)
    .set({ suspendedAt: suspension?.at ?? null, suspensionReason: suspension?.reason ?? null })
    .where(
      and(
        eq(creators.id, creatorId),
        suspension ? isNull(creators.suspendedAt) : isNotNull(creators.suspendedAt),
      ),
    )
    .returning({ id: creators.id });
  return rows.length > 0;
}

export async function insertReport(db: Db, row: typeof reports.$inferInsert): Promise<ReportRow> {
  const [inserted] = await db.insert(reports).values(row).returning();
  return inserted!;
}

/** Reports with their listing's name, newest first; open ones only unless `all`. */
export function reportList(db: Db, options: { all: boolean; before?: Date; limit: number }) {
  return db
    .select({ report: reports, owner: listings.owner, slug: listings.slug })
    .from(reports)
    .innerJoin(listings, eq(listings.id, reports.listingId))
    .where(
      and(
        options.all ? undefined : isNull(reports.resolvedAt),
        options.before ? lt(reports.createdAt, options.before) : undefined,
      ),
    )
    .orderBy(desc(reports.createdAt))
    .limit(options.limit);
}

/** Resolves an open report; its row, or undefined when unknown or resolved already. */
export async function resolveReportRow(db: Db, id: string, at: Date, note: string) {
  const [row] = await db
    .update(reports)
    .set({ resolvedAt: at, resolutionNote: note })
    .where(and(eq(reports.id, id), isNull(reports.resolvedAt)))
    .returning();
  return row;
}

/** How many reports this listing received since `since`: a flood from one listing's page is visible. */
export async function reportsSince(db: Db, listingId: string, since: Date): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(reports)
    .where(and(eq(reports.listingId, listingId), gt(reports.createdAt, since)));
  return row?.n ?? 0;
}
