import { and, asc, desc, eq, gt, isNull, lt } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { auditLog, domainEvents, listings, reports } from '../db/schema/index.js';

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
