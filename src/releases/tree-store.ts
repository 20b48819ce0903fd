import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { and, asc, eq, gte, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { releaseTreeParts } from '../db/schema/index.js';

/** Parts read per statement. */
const PARTS_PER_READ = 4;

/**
 * Records a release's file tree (`computed.tree`), given as the JSON text of its parts
 * (`encodeTreeParts`), one small statement each with a turn of the event loop between them: at the
 * file limit the whole tree in one statement held the embedded database, and with it every request,
 * for longer than any request may wait. A retried inspection writes the same parts again.
 */
export async function recordReleaseTree(db: Db, releaseId: string, parts: readonly string[]): Promise<void> {
  for (const [part, text] of parts.entries()) {
    await db
      .insert(releaseTreeParts)
      .values({ releaseId, part, files: sql`${text}::jsonb` })
      .onConflictDoUpdate({
        target: [releaseTreeParts.releaseId, releaseTreeParts.part],
        set: { files: sql`excluded.files` },
      });
    await yieldToLoop();
  }
  // A retry after an analyser upgrade may find fewer files: no part of the older tree may remain.
  await db
    .delete(releaseTreeParts)
    .where(and(eq(releaseTreeParts.releaseId, releaseId), gte(releaseTreeParts.part, parts.length)));
}

/** A release's file tree in tree order, read a few parts at a time; empty when none was recorded. */
export async function releaseTree(db: Db, releaseId: string): Promise<unknown[]> {
  const files: unknown[] = [];
  for (let from = 0; ; from += PARTS_PER_READ) {
    const rows = await db
      .select({ files: releaseTreeParts.files })
      .from(releaseTreeParts)
      .where(
        and(
          eq(releaseTreeParts.releaseId, releaseId),
          gte(releaseTreeParts.part, from),
          lt(releaseTreeParts.part, from + PARTS_PER_READ),
        ),
      )
      .orderBy(asc(releaseTreeParts.part));
    for (const row of rows) files.push(...(row.files as unknown[]));
    if (rows.length < PARTS_PER_READ) return files;
    await yieldToLoop();
  }
}
