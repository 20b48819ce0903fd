import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { listings, releases } from '../db/schema/index.js';
import type { PublicListing } from './public-listings.js';

/**
 * The catalogue the public pages read: listings on show with their latest passing release. Public
 * documents are built from these, never by joining the listings tables themselves.
 */

/** The release fields public pages show without its documents. */
export interface ReleaseHead {
  id: string;
  version: string;
  artifactSha256: string;
  publishedAt: Date;
  /** When advisory data flagged it last (`advisory_flag`), so a cached manifest is rebuilt. */
  advisoryFlaggedAt: Date | null;
}

/**
 * A published or retired listing and its latest passing release, in one indexed query, without
 * the large `computed` and `scan` documents (`findReleaseDocuments`), which a caller caching the
 * serialised manifest loads only once.
 */
export async function findCatalogEntry(
  db: Db,
  owner: string,
  slug: string,
): Promise<{ listing: PublicListing; release: ReleaseHead } | undefined> {
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
        advisoryFlaggedAt: releases.advisoryFlaggedAt,
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
  // The status filter above leaves only the statuses a PublicListing has.
  return row as { listing: PublicListing; release: ReleaseHead } | undefined;
}

/** What repo402 measured and found in a release (`computed`, `scan`), and what advisories found since. */
export async function findReleaseDocuments(db: Db, releaseId: string) {
  const [row] = await db
    .select({
      computed: releases.computed,
      scan: releases.scan,
      advisoryFlag: releases.advisoryFlag,
      advisoryFlaggedAt: releases.advisoryFlaggedAt,
    })
    .from(releases)
    .where(eq(releases.id, releaseId));
  return row;
}

/** Every listing on sale (published) with its latest passing release, at most `limit`. */
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
