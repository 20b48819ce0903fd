import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { releaseBlobSets, releaseBlobs } from '../db/schema/index.js';

export interface Originality {
  blob_overlap_ratio: number;
  blobs_seen_elsewhere: number;
  blobs_total: number;
  nearest_listing: string | null;
  derivative_of: string | null;
}

export const DERIVATIVE_THRESHOLD = 0.9;
/** Blobs this small (empty files, one-line configs) are shared by chance and say nothing about copying. */
export const MIN_BLOB_BYTES = 64;
const INSERT_BATCH = 10_000;

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
  await db.transaction(async (tx) => {
    const inserted = await tx
      .insert(releaseBlobSets)
      .values({
        listingId: input.listingId,
        version: input.version,
        channel: input.channel,
        blobsTotal: shas.length,
        recordedAt: input.recordedAt,
      })
      .onConflictDoNothing()
      .returning({ version: releaseBlobSets.version });
    if (inserted.length === 0) return;
    for (let i = 0; i < shas.length; i += INSERT_BATCH) {
      await tx
        .insert(releaseBlobs)
        .values(
          shas
            .slice(i, i + INSERT_BATCH)
            .map((blobSha) => ({ listingId: input.listingId, version: input.version, blobSha })),
        )
        .onConflictDoNothing();
    }
  });
  const [set] = await db
    .select({ recordedAt: releaseBlobSets.recordedAt })
    .from(releaseBlobSets)
    .where(and(eq(releaseBlobSets.listingId, input.listingId), eq(releaseBlobSets.version, input.version)));
  const total = shas.length;
  if (total === 0 || !set)
    return {
      blob_overlap_ratio: 0,
      blobs_seen_elsewhere: 0,
      blobs_total: 0,
      nearest_listing: null,
      derivative_of: null,
    };

  const rows = await db.execute<{ listing_id: string; channel: string; blob_sha: string }>(sql`
    with mine as (
      select b.blob_sha, min(s.recorded_at) as first_seen
      from ${releaseBlobs} b join ${releaseBlobSets} s on s.listing_id = b.listing_id and s.version = b.version
      where b.listing_id = ${input.listingId} and b.blob_sha in (
        select blob_sha from ${releaseBlobs} where listing_id = ${input.listingId} and version = ${input.version}
      )
      group by b.blob_sha
    )
    select distinct o.listing_id, os.channel, o.blob_sha
    from mine m
    join ${releaseBlobs} o on o.blob_sha = m.blob_sha and o.listing_id <> ${input.listingId}
    join ${releaseBlobSets} os on os.listing_id = o.listing_id and os.version = o.version
    where os.recorded_at < m.first_seen
  `);
  const perListing = new Map<string, { channel: string; count: number }>();
  const elsewhere = new Set<string>();
  for (const row of rowsOf<{ listing_id: string; channel: string; blob_sha: string }>(rows)) {
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

/** node-postgres returns `{rows}`, PGlite's drizzle driver too; normalise. */
function rowsOf<T>(result: unknown): T[] {
  return Array.isArray(result) ? (result as T[]) : ((result as { rows: T[] }).rows ?? []);
}
