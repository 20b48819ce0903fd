import { type AnyColumn, and, desc, eq, ilike, isNotNull, isNull, ne, type SQL, sql } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { listings, releases } from '../db/schema/index.js';
import { onShowSql, type PublicListing, publicListingColumns } from './public-listings.js';

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
      listing: publicListingColumns,
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
        sql.raw(onShowSql('listings')),
        eq(releases.verdict, 'pass'),
        isNull(releases.yankedAt),
      ),
    )
    .orderBy(desc(releases.major), desc(releases.minor), desc(releases.patch))
    .limit(1);
  // The status filter above leaves only the statuses a PublicListing has.
  return row as { listing: PublicListing; release: ReleaseHead } | undefined;
}

/**
 * What repo402 measured and found in a release (`computed` but its file tree, which is stored
 * apart: `releaseTree`), and what advisories found since.
 */
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
    .where(
      and(
        eq(listings.status, 'published'),
        isNull(listings.suspendedAt),
        eq(releases.verdict, 'pass'),
        isNull(releases.yankedAt),
      ),
    )
    .orderBy(listings.id, desc(releases.major), desc(releases.minor), desc(releases.patch))
    .limit(limit);
}

/** A listing on show (the home page): its version on sale, that release's verdict and advisory flag. */
export interface ShownListing {
  id: string;
  owner: string;
  slug: string;
  description: string;
  /** Never null: a listing without a price is not for sale. */
  priceMicro: bigint;
  updatePriceMicro: bigint;
  version: string;
  verdict: 'pending' | 'pass' | 'fail';
  /** Set when advisories published after its scan match its dependencies (`advisory_flag`). */
  advisoryFlaggedAt: Date | null;
  /** What the query's `count` counted for this listing. */
  count: number;
}

export interface ShowcaseQuery {
  /** Words each shown listing has somewhere in `owner/slug` or its description, in any case. */
  words: string[];
  /** A count another domain keeps per listing (its buyers), as an expression of the listing's id. */
  count: (listingId: AnyColumn) => SQL<number>;
  /** Newest published first, or the highest `count` first (then newest). */
  order: 'newest' | 'count';
  limit: number;
  offset: number;
}

/**
 * Listings on show, one page of them, in one query: published, priced, with a release that passes
 * (the one on sale, by a lateral lookup on `releases_listing_order`), and a source still reachable
 * (a listing whose repository is gone stays on sale to whoever finds it, but is not shown to
 * newcomers). Each is one `/{owner}/{slug}` serves, so every link resolves. Newest first walks
 * `listings_published_order` and stops after the page; by count, every listing on show is counted.
 */
export async function listShownListings(db: Db, query: ShowcaseQuery): Promise<ShownListing[]> {
  const onSale = db
    .select({
      version: releases.version,
      verdict: releases.verdict,
      advisoryFlaggedAt: releases.advisoryFlaggedAt,
    })
    .from(releases)
    .where(and(eq(releases.listingId, listings.id), eq(releases.verdict, 'pass'), isNull(releases.yankedAt)))
    .orderBy(desc(releases.major), desc(releases.minor), desc(releases.patch))
    .limit(1)
    .as('on_sale');
  const text = sql`(${listings.owner} || '/' || ${listings.slug} || ' ' || ${listings.description})`;
  const rows = await db
    .select({
      id: listings.id,
      owner: listings.owner,
      slug: listings.slug,
      description: listings.description,
      priceMicro: listings.priceMicro,
      updatePriceMicro: listings.updatePriceMicro,
      version: onSale.version,
      verdict: onSale.verdict,
      advisoryFlaggedAt: onSale.advisoryFlaggedAt,
      count: query.count(listings.id).mapWith(Number).as('count'),
    })
    .from(listings)
    .innerJoinLateral(onSale, sql`true`)
    .where(
      and(
        eq(listings.status, 'published'),
        // A suspended listing sells nothing: neither the home page nor discovery offers it.
        isNull(listings.suspendedAt),
        isNotNull(listings.priceMicro),
        ne(listings.sourceState, 'unreachable'),
        ...query.words.map((word) => ilike(text, `%${likeEscaped(word)}%`)),
      ),
    )
    .orderBy(
      ...(query.order === 'count' ? [desc(sql`"count"`)] : []),
      desc(listings.publishedAt),
      desc(listings.id),
    )
    .limit(query.limit)
    .offset(query.offset);
  // The filter above leaves only priced listings.
  return rows as ShownListing[];
}

/** `word` matched literally by LIKE: its wildcards and the escape character escaped. */
function likeEscaped(word: string): string {
  return word.replace(/[\\%_]/g, (char) => `\\${char}`);
}
