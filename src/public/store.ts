import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { listings, releases } from '../db/schema/index.js';

/**
 * The read model behind public pages: one indexed query for a listing and its latest passing
 * release, without the large `computed` and `scan` documents, which are loaded only when the
 * serialised manifest is not cached yet.
 */
export async function findManifestHead(db: Db, owner: string, slug: string) {
  const [row] = await db
    .select({
      listing: {
        id: listings.id,
        owner: listings.owner,
        slug: listings.slug,
        creatorId: listings.creatorId,
        status: listings.status,
        priceMicro: listings.priceMicro,
        updatePriceMicro: listings.updatePriceMicro,
        description: listings.description,
        triggerHint: listings.triggerHint,
        licence: listings.licence,
      },
      release: {
        id: releases.id,
        version: releases.version,
        // Never null on a passing release (the releases_artifact_whole constraint).
        artifactSha256: sql<string>`${releases.artifactSha256}`,
        publishedAt: releases.publishedAt,
      },
    })
    .from(listings)
    .innerJoin(releases, eq(releases.listingId, listings.id))
    .where(
      and(
        eq(listings.owner, owner),
        eq(listings.slug, slug),
        inArray(listings.status, ['published', 'retired']),
        eq(releases.verdict, 'pass'),
      ),
    )
    .orderBy(desc(releases.major), desc(releases.minor), desc(releases.patch))
    .limit(1);
  return row;
}

export async function findReleaseDocuments(db: Db, releaseId: string) {
  const [row] = await db
    .select({ computed: releases.computed, scan: releases.scan })
    .from(releases)
    .where(eq(releases.id, releaseId));
  return row;
}

/** Every listing on sale with its latest passing release, for the discovery document. */
export async function listLiveListings(db: Db, limit: number) {
  return db
    .selectDistinctOn([listings.id], {
      id: listings.id,
      owner: listings.owner,
      slug: listings.slug,
      priceMicro: listings.priceMicro,
      updatePriceMicro: listings.updatePriceMicro,
      description: listings.description,
      version: releases.version,
      publishedAt: releases.publishedAt,
    })
    .from(listings)
    .innerJoin(releases, eq(releases.listingId, listings.id))
    .where(and(eq(listings.status, 'published'), eq(releases.verdict, 'pass')))
    .orderBy(listings.id, desc(releases.major), desc(releases.minor), desc(releases.patch))
    .limit(limit);
}
