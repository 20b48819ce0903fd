import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { and, eq, sql } from 'drizzle-orm';
import { type Db, selectRows } from '../db/connect.js';
import { releaseBlobSets, releaseBlobs } from '../db/schema/index.js';

export interface Originality {
  blob_overlap_ratio: number;
  blobs_seen_elsewhere: number;
  blobs_total: number;
  nearest_listing: string | null;
  derivative_of: string | null;
}

export const DERIVATIVE_THRESHOLD = 0.9;
/**
 * Rows per statement. On the embedded database every statement runs on the main thread; small
 * ones with a turn of the event loop between them keep a 20,000-blob release from stalling the API.
 */
const BATCH = 100;

/**
 * Records this release's blob SHAs (once: a retried cut keeps the first recording) and measures
 * how many were recorded earlier by OTHER listings. A blob counts against another listing only if
 * that listing recorded it before this listing first did, so the original is never called the copy.
 */
export async function recordAndCompareBlobs(
  db: Db,
  input: { listingId: string; channel: string; version: string; recordedAt: Date; blobShas: string[] },
): Promise<Originality> {
  const shas = [...new Set(input.blobShas)];
  const release = and(eq(releaseBlobs.listingId, input.listingId), eq(releaseBlobs.version, input.version));
  if (!(await blobSetRecorded(db, input))) {
    // The set row is written last and marks the recording complete: no long transaction holds the
    // embedded database's one connection, and a run cut short leaves rows no query counts (every
    // query joins the set), which the next run clears before recording again.
    await db.delete(releaseBlobs).where(release);
    for (let i = 0; i < shas.length; i += BATCH) {
      await yieldToLoop();
      await db
        .insert(releaseBlobs)
        .values(
          shas
            .slice(i, i + BATCH)
            .map((blobSha) => ({ listingId: input.listingId, version: input.version, blobSha })),
        );
    }
    await yieldToLoop();
    await db
      .insert(releaseBlobSets)
      .values({
        listingId: input.listingId,
        version: input.version,
        channel: input.channel,
        blobsTotal: shas.length,
        recordedAt: input.recordedAt,
      })
      .onConflictDoNothing();
  }
  const total = shas.length;
  if (total === 0)
    return {
      blob_overlap_ratio: 0,
      blobs_seen_elsewhere: 0,
      blobs_total: 0,
      nearest_listing: null,
      derivative_of: null,
    };

  // Other listings' recordings of these blobs made before this listing first recorded each one.
  const rows: Array<{ listing_id: string; channel: string; blob_sha: string }> = [];
  for (let i = 0; i < shas.length; i += BATCH) {
    const found = await selectRows<{ listing_id: string; channel: string; blob_sha: string }>(
      db,
      sql`
      select distinct o.listing_id, os.channel, o.blob_sha
      from ${releaseBlobs} o
      join ${releaseBlobSets} os on os.listing_id = o.listing_id and os.version = o.version
      where o.blob_sha in ${shas.slice(i, i + BATCH)} and o.listing_id <> ${input.listingId}
        and os.recorded_at < (
          select min(s.recorded_at)
          from ${releaseBlobs} b
          join ${releaseBlobSets} s on s.listing_id = b.listing_id and s.version = b.version
          where b.listing_id = ${input.listingId} and b.blob_sha = o.blob_sha
        )
    `,
    );
    rows.push(...found);
    await yieldToLoop();
  }
  const perListing = new Map<string, { channel: string; count: number }>();
  const elsewhere = new Set<string>();
  for (const row of rows) {
    elsewhere.add(row.blob_sha);
    const entry = perListing.get(row.listing_id) ?? { channel: row.channel, count: 0 };
    entry.count++;
    perListing.set(row.listing_id, entry);
  }
  let nearest: { channel: string; count: number } | undefined;
  for (const entry of perListing.values())
    if (
      !nearest ||
      entry.count > nearest.count ||
      (entry.count === nearest.count && entry.channel < nearest.channel)
    )
      nearest = entry;
  const ratio = nearest ? nearest.count / total : 0;
  return {
    blob_overlap_ratio: Math.round(ratio * 1000) / 1000,
    blobs_seen_elsewhere: elsewhere.size,
    blobs_total: total,
    nearest_listing: nearest?.channel ?? null,
    derivative_of: nearest && ratio >= DERIVATIVE_THRESHOLD ? nearest.channel : null,
  };
}

async function blobSetRecorded(db: Db, input: { listingId: string; version: string }): Promise<boolean> {
  const [set] = await db
    .select({ version: releaseBlobSets.version })
    .from(releaseBlobSets)
    .where(and(eq(releaseBlobSets.listingId, input.listingId), eq(releaseBlobSets.version, input.version)));
  return set !== undefined;
}
