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
/** Sixteen ranges of hexadecimal SHA, by first digit, each `[from, to)`. */
const SHA_RANGES = Array.from({ length: 16 }, (_, i) => [
  i.toString(16),
  i === 15 ? 'g' : (i + 1).toString(16),
]);

/**
 * Records this release's blob SHAs (once: a retried cut keeps the first recording) and measures
 * how many were recorded earlier by OTHER listings. A blob counts against another listing only if
 * that listing recorded it before this listing first did, so the original is never called the copy.
 *
 * Every question asked of the table is when a listing first recorded a blob, so a release records
 * only the blobs its listing had not recorded before (its set row still counts them all): the next
 * release of a 20,000-file repository that changes ten files writes ten rows, and the table grows
 * with what listings add, not with how often they release. Reads go by ranges of blob SHA, about a
 * sixteenth of the listing's blobs per statement, so none holds the embedded database's thread long.
 */
export async function recordAndCompareBlobs(
  db: Db,
  input: { listingId: string; channel: string; version: string; recordedAt: Date; blobShas: string[] },
): Promise<Originality> {
  const shas = [...new Set(input.blobShas)];
  const firstSeen = await firstRecorded(db, input.listingId);
  if (!(await blobSetRecorded(db, input))) {
    // The set row is written last and marks the recording complete: no long transaction holds the
    // embedded database's one connection, and a run cut short leaves rows no query counts (every
    // query joins the set), which the next run clears before recording again.
    await db
      .delete(releaseBlobs)
      .where(and(eq(releaseBlobs.listingId, input.listingId), eq(releaseBlobs.version, input.version)));
    const fresh = shas.filter((sha) => !firstSeen.has(sha));
    for (let i = 0; i < fresh.length; i += BATCH) {
      await yieldToLoop();
      await db
        .insert(releaseBlobs)
        .values(
          fresh
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
    for (const sha of fresh) firstSeen.set(sha, input.recordedAt.getTime());
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

  // Other listings' first recordings of this listing's blobs, kept when earlier than this one's.
  const inRelease = new Set(shas);
  const perListing = new Map<string, { channel: string; count: number }>();
  const elsewhere = new Set<string>();
  for (const [from, to] of SHA_RANGES) {
    const found = await selectRows<{
      listing_id: string;
      channel: string;
      blob_sha: string;
      first_ms: number;
    }>(
      db,
      sql`
      select o.listing_id, os.channel, o.blob_sha,
        (extract(epoch from min(os.recorded_at)) * 1000)::float8 as first_ms
      from ${releaseBlobs} o
      join ${releaseBlobSets} os on os.listing_id = o.listing_id and os.version = o.version
      where o.listing_id <> ${input.listingId} and o.blob_sha >= ${from} and o.blob_sha < ${to}
        and o.blob_sha in (
          select b.blob_sha from ${releaseBlobs} b
          where b.listing_id = ${input.listingId} and b.blob_sha >= ${from} and b.blob_sha < ${to}
        )
      group by o.listing_id, os.channel, o.blob_sha
    `,
    );
    for (const row of found) {
      const mine = firstSeen.get(row.blob_sha);
      if (!inRelease.has(row.blob_sha) || mine === undefined || !(Number(row.first_ms) < mine)) continue;
      elsewhere.add(row.blob_sha);
      const entry = perListing.get(row.listing_id) ?? { channel: row.channel, count: 0 };
      entry.count++;
      perListing.set(row.listing_id, entry);
    }
    await yieldToLoop();
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

/** When the listing first recorded each blob it holds (its complete recordings only), in epoch ms. */
async function firstRecorded(db: Db, listingId: string): Promise<Map<string, number>> {
  const first = new Map<string, number>();
  for (const [from, to] of SHA_RANGES) {
    const rows = await selectRows<{ blob_sha: string; first_ms: number }>(
      db,
      sql`
      select b.blob_sha, (extract(epoch from min(s.recorded_at)) * 1000)::float8 as first_ms
      from ${releaseBlobs} b
      join ${releaseBlobSets} s on s.listing_id = b.listing_id and s.version = b.version
      where b.listing_id = ${listingId} and b.blob_sha >= ${from} and b.blob_sha < ${to}
      group by b.blob_sha
    `,
    );
    for (const row of rows) first.set(row.blob_sha, Number(row.first_ms));
    await yieldToLoop();
  }
  return first;
}
