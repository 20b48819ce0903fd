import type { Readable } from 'node:stream';
import { z } from 'zod';
import { attestationOf } from '../attestations/service.js';
import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import { findPublicListing } from '../listings/public-listings.js';
import { ownedListing } from '../listings/service.js';
import { listingCacheSlot } from '../platform/cache/caches.js';
import { decodeCursor, encodeCursor } from '../platform/cursor.js';
import { AppError } from '../platform/errors.js';
import { type Prebuilt, prebuilt } from '../platform/http/prebuilt.js';
import { parseVersion, VERSION_PATTERN } from '../platform/versions.js';
import {
  cutStagesOf,
  cutsOf,
  findRelease,
  newestRelease,
  newestReleasesOf,
  type ReleaseCutRow,
  type ReleaseRow,
  releasePage,
} from './store.js';
import {
  type PricesInForce,
  type ReleaseBody,
  type ReleaseLinks,
  releaseBody,
  type StagedRelease,
} from './views.js';

/**
 * Any release of the log, as stored (money as `bigint`); format it for the wire with
 * `releaseBody`. A release refused for a limit has no zip: its artifact fields are null.
 */
export type LoggedRelease = ReleaseRow;

/** A release with its zip: every pending or passing one (the database refuses either without). */
export type Release = ReleaseRow & { artifactKey: string; artifactSha256: string; sizeBytes: number };

function withArtifact(row: ReleaseRow | undefined): Release | null {
  if (!row) return null;
  if (row.artifactKey === null || row.artifactSha256 === null || row.sizeBytes === null) {
    throw new Error(`release ${row.id} is ${row.verdict} without a zip`);
  }
  return row as Release;
}

/** The newest release (by version) whose verdict is `pass`: what is on sale. */
export async function latestPassingRelease(db: Db, listingId: string): Promise<Release | null> {
  return withArtifact(await newestRelease(db, listingId, { passing: true }));
}

/** The newest release of any verdict. */
export async function newestAnyRelease(db: Db, listingId: string): Promise<LoggedRelease | null> {
  return (await newestRelease(db, listingId)) ?? null;
}

/** A passing release by version; null for unknown, pending and failing versions alike. */
export async function publishedRelease(db: Db, listingId: string, version: string): Promise<Release | null> {
  if (!parseVersion(version)) return null;
  const row = await findRelease(db, listingId, version);
  return row?.verdict === 'pass' ? withArtifact(row) : null;
}

// For the operator's yanks: a yank can change the release on sale; a holder is told what it holds.
export { findRelease as anyRelease, markOnSale, setYank, yankedReleasesOf } from './store.js';
// The file tree (`computed.tree`) is stored apart from the rest of a release's `computed`.
export { releaseTree } from './tree-store.js';
export { type UpdateChanges, updateOffer } from './update-summary.js';

/** Streams a release's zip from blob storage. */
export function openArtifact(
  ctx: AppContext,
  release: Release,
): Promise<{ stream: Readable; sizeBytes: number }> {
  return ctx.blobs.open(release.artifactKey);
}

/**
 * The rows with, on each pending release, the stage its cut has reached: one query, and only when
 * a release is pending (most logs have none).
 */
async function withCutStages<T extends ReleaseRow>(db: Db, rows: T[]): Promise<Array<T & StagedRelease>> {
  const pending = rows.filter((row) => row.verdict === 'pending').map((row) => row.id);
  if (pending.length === 0) return rows;
  const stages = await cutStagesOf(db, pending);
  return rows.map((row) => {
    const cutStage = stages.get(row.id);
    return cutStage ? { ...row, cutStage } : row;
  });
}

/** The newest releases of any verdict, newest first, as SPEC Release objects (the manifest page's log excerpt). */
export async function recentReleases(
  db: Db,
  listing: { id: string } & PricesInForce,
  limit: number,
  links: ReleaseLinks,
): Promise<ReleaseBody[]> {
  const rows = await withCutStages(db, await releasePage(db, listing.id, limit));
  return rows.map((row) => releaseBody(row, listing, links));
}

/** The newest passing and the newest release of any verdict, for each listing (listing views). */
export async function headReleases(
  db: Db,
  listingIds: string[],
): Promise<Map<string, { latest: Release | null; newest: StagedRelease | null }>> {
  const [passing, any] = await Promise.all([
    newestReleasesOf(db, listingIds, { passing: true }),
    newestReleasesOf(db, listingIds),
  ]);
  // The newest release may be pending: the listing view shows how far its cut has got.
  const newest = new Map((await withCutStages(db, [...any.values()])).map((row) => [row.listingId, row]));
  return new Map(
    listingIds.map((id) => [id, { latest: withArtifact(passing.get(id)), newest: newest.get(id) ?? null }]),
  );
}

/** Cuts that have not become a release: still queued, or failed with a reason (shown to the creator). */
export async function unfinishedCuts(db: Db, listingId: string): Promise<ReleaseCutRow[]> {
  const rows = await cutsOf(db, listingId, ['queued', 'failed']);
  return rows.sort((a, b) => b.requestedAt.getTime() - a.requestedAt.getTime());
}

const RELEASE_LOG_PAGE_SIZE = 50;
const LogCursor = z.strictObject({ v: z.string().regex(VERSION_PATTERN) });

export interface ReleaseLogPage {
  owner: string;
  slug: string;
  status: 'published' | 'retired';
  /** The one version sold, the newest passing release of a published listing; null once retired. */
  versionOnSale: string | null;
  releases: ReleaseBody[];
  nextCursor: string | null;
}

/** One page of a listing's releases, newest version first: the release log's page size and cursor. */
async function releasePageOf(
  db: Db,
  listingId: string,
  cursor: string | undefined,
): Promise<{ releases: StagedRelease[]; nextCursor: string | null }> {
  const before = cursor ? parseVersion(decodeCursor(cursor, LogCursor).v) : undefined;
  const rows = await releasePage(db, listingId, RELEASE_LOG_PAGE_SIZE + 1, before);
  const page = rows.slice(0, RELEASE_LOG_PAGE_SIZE);
  return {
    releases: await withCutStages(db, page),
    nextCursor: rows.length > RELEASE_LOG_PAGE_SIZE ? encodeCursor({ v: page.at(-1)!.version }) : null,
  };
}

/**
 * The public release log: every release, failing and pending ones too, newest version first.
 * Drafts and unknown listings are both `404`; a retired listing keeps its log.
 */
export async function releaseLog(
  db: Db,
  baseUrl: string,
  owner: string,
  slug: string,
  cursor?: string,
): Promise<ReleaseLogPage> {
  const listing = await findPublicListing(db, owner, slug);
  if (!listing) throw new AppError('not_found', { message: 'No such listing' });
  const page = await releasePageOf(db, listing.id, cursor);
  const onSale = listing.status === 'published' ? await latestPassingRelease(db, listing.id) : null;
  return {
    owner: listing.owner,
    slug: listing.slug,
    status: listing.status,
    versionOnSale: onSale?.version ?? null,
    releases: page.releases.map((row) => ({
      ...releaseBody(row, listing, { baseUrl, owner: listing.owner, slug: listing.slug }),
      on_sale: row.version === onSale?.version,
    })),
    nextCursor: page.nextCursor,
  };
}

/** A page of the public release log as its JSON body says it. */
export interface ReleaseLogBody {
  owner: string;
  slug: string;
  status: ReleaseLogPage['status'];
  version_on_sale: string | null;
  releases: ReleaseBody[];
  next_cursor: string | null;
}

/** The release log's first page, serialised once per listing change (every agent checks it). */
const firstLogPages = listingCacheSlot<{ body: ReleaseLogBody; doc: Prebuilt }>({
  max: 10_000,
  ttlMs: 1000,
  keyedByListing: true,
});

/** The public release log as its JSON body (and serialised): the first page from the context's cache. */
export function publicReleaseLog(
  ctx: AppContext,
  owner: string,
  slug: string,
  cursor?: string,
): Promise<{ body: ReleaseLogBody; doc: Prebuilt }> {
  const load = async () => {
    const page = await releaseLog(ctx.database.db, ctx.config.baseUrl, owner, slug, cursor);
    const body: ReleaseLogBody = {
      owner: page.owner,
      slug: page.slug,
      status: page.status,
      version_on_sale: page.versionOnSale,
      releases: page.releases,
      next_cursor: page.nextCursor,
    };
    return { body, doc: prebuilt(body) };
  };
  return cursor === undefined ? ctx.caches.get(firstLogPages).get(`${owner}/${slug}`, load) : load();
}

/**
 * A release's attestation (its DSSE envelope), serialised: any release of a public listing whose
 * verdict is recorded, failing ones too. A pending release has none yet: `404` like an unknown one.
 */
export async function releaseAttestation(
  db: Db,
  owner: string,
  slug: string,
  version: string,
): Promise<Prebuilt> {
  const listing = await findPublicListing(db, owner, slug);
  const release = listing && parseVersion(version) ? await findRelease(db, listing.id, version) : undefined;
  const envelope = release ? await attestationOf(db, release.id) : undefined;
  if (!envelope) {
    throw new AppError('not_found', {
      message: release
        ? 'This release is still being inspected; its attestation follows its verdict'
        : 'No such release',
    });
  }
  return prebuilt(envelope);
}

/**
 * The creator's own release log of one of their listings, drafts included: the public log's
 * releases, order, page size and cursor, as stored (with the scan report). Another creator's
 * listing is the same `404` as an unknown one.
 */
export async function ownReleaseLog(
  db: Db,
  creatorId: string,
  listingId: string,
  cursor?: string,
): Promise<{ releases: StagedRelease[]; nextCursor: string | null; prices: PricesInForce }> {
  const listing = await ownedListing(db, creatorId, listingId);
  return { ...(await releasePageOf(db, listing.id, cursor)), prices: listing };
}
