import { LRUCache } from 'lru-cache';
import { attestationUrl } from '../attestations/urls.js';
import type { AppContext } from '../context.js';
import { isValidName } from '../identity/handles.js';
import { findCatalogEntry, findReleaseDocuments, type ReleaseHead } from '../listings/catalog.js';
import { asShownPublicly, type PublicListing } from '../listings/public-listings.js';
import { ownedListing } from '../listings/service.js';
import { cacheSlot, listingCacheSlot } from '../platform/cache/caches.js';
import { AppError } from '../platform/errors.js';
import { type Prebuilt, prebuilt } from '../platform/http/prebuilt.js';
import { formatMicroUsdc } from '../platform/money/money.js';
import { offerFor, type PricedListing, pricedListing } from '../purchases/pricing.js';
import { latestPassingRelease, releaseTree } from '../releases/service.js';
import { withAdvisoryFlag } from '../releases/views.js';
import { toPublicScan } from '../scan/report.js';
import type { ScanReport } from '../scan/types.js';

/**
 * The public Manifest (GET /api/label/{owner}/{slug}): what repo402 measured (`computed`, fixed
 * when the release was analysed) kept apart from what the seller says (`self_reported`).
 *
 * Two caches keep the database off the hot path (PGlite serves one query at a time): the
 * serialised body and its strong ETag per (release, listing fields), built once per release and
 * listing revision; and the listing's current head for one second, dropped at once in every
 * process when the listing changes (`ctx.listingEvents`; the second bounds a notice that never
 * arrived), well inside the minute the response itself may be cached for. Both caches belong to
 * the app's context (`ctx.caches`).
 */

export interface ManifestView {
  listing: PublicListing & PricedListing;
  release: ReleaseHead;
  manifest: Record<string, unknown>;
  doc: Prebuilt;
}

/**
 * Bytes of serialised manifests kept (the parsed form beside each takes a few times as much): a
 * typical manifest is 40 KB, one at the file limit 1.3 MB, so a count alone could hold gigabytes.
 */
const MANIFEST_CACHE_BYTES = 32 * 1024 * 1024;
const manifestDocuments = cacheSlot(
  () =>
    new LRUCache<string, { manifest: Record<string, unknown>; doc: Prebuilt }>({
      max: 2000,
      maxSize: MANIFEST_CACHE_BYTES,
      sizeCalculation: (entry) => entry.doc.body.length,
    }),
);
const manifestViews = listingCacheSlot<ManifestView>({ max: 10_000, ttlMs: 1000, keyedByListing: true });

/** The manifest of a published or retired listing's latest passing release; `404 not_found` otherwise. */
export function findManifest(ctx: AppContext, owner: string, slug: string): Promise<ManifestView> {
  return ctx.caches.get(manifestViews).get(`${owner}/${slug}`, () => loadManifest(ctx, owner, slug));
}

async function loadManifest(ctx: AppContext, owner: string, slug: string): Promise<ManifestView> {
  // A name that cannot exist (a NUL byte, say) is simply not found, and never reaches the database.
  const head =
    isValidName(owner) && isValidName(slug)
      ? await findCatalogEntry(ctx.database.db, owner, slug)
      : undefined;
  // Publishing needs a price: a listing without one is not for sale here either, as on /api/v and /api/r.
  const listing = pricedListing(head?.listing);
  if (!head || !listing) throw new AppError('not_found', { message: `No listing ${owner}/${slug}` });
  return manifestView(ctx, listing, head.release);
}

/**
 * The manifest of one of the creator's listings (GET /api/listings/{id}/manifest): for a published
 * or retired listing the label's document, byte for byte; for a draft the one the label will serve
 * once it is published (`status: published`), at its latest passing release. Read fresh, past the
 * head cache, so the creator sees a change at once. Another creator's listing is the same `404` as
 * an unknown one; so is a listing no release of which passes yet.
 */
export async function ownListingManifest(
  ctx: AppContext,
  creatorId: string,
  listingId: string,
): Promise<ManifestView> {
  const db = ctx.database.db;
  const owned = await ownedListing(db, creatorId, listingId);
  const release = await latestPassingRelease(db, owned.id);
  if (!release) {
    throw new AppError('not_found', {
      message:
        'No release of this listing passes its scan yet: the manifest shows the latest passing release',
    });
  }
  const listing = pricedListing(asShownPublicly(owned));
  if (!listing) {
    throw new AppError('listing_not_ready', {
      message: 'Set a price first: the manifest shows it',
      details: { blocking: ['price'] },
    });
  }
  const { id, version, artifactSha256, publishedAt, advisoryFlaggedAt } = release;
  return manifestView(ctx, listing, { id, version, artifactSha256, publishedAt, advisoryFlaggedAt });
}

/** The serialised manifest of `release` as `listing` sells it, built once per release and listing revision. */
async function manifestView(
  ctx: AppContext,
  listing: PublicListing & PricedListing,
  release: ReleaseHead,
): Promise<ManifestView> {
  const key = [
    release.id,
    release.advisoryFlaggedAt?.toISOString(),
    listing.status,
    listing.priceMicro,
    listing.updatePriceMicro,
    listing.description,
    listing.triggerHint,
  ].join('\u0000');
  const documents = ctx.caches.get(manifestDocuments);
  let entry = documents.get(key);
  if (!entry) {
    const [stored, tree] = await Promise.all([
      findReleaseDocuments(ctx.database.db, release.id),
      releaseTree(ctx.database.db, release.id),
    ]);
    const manifest = buildManifest(ctx.config.baseUrl, listing, release, stored, tree);
    entry = { manifest, doc: prebuilt(manifest) };
    documents.set(key, entry);
  }
  return { listing, release, ...entry };
}

/** What "latest" means wherever a version on sale is shown (issue 17 item 14). */
export const RELEASE_LOG_ON_SALE =
  'The version on sale is the newest release (highest X.Y.Z) whose scan passed; newer releases that failed their scan or are pending are listed in the release log and never sold.';
const RELEASE_LOG_CADENCE =
  'computed.cadence.releases counts the releases with a zip (any verdict) up to and including `version`, as when `version` was inspected; the release log lists every release, also ones refused for a size limit and ones cut later.';

export function listingUrls(baseUrl: string, owner: string, slug: string) {
  return {
    page: `${baseUrl}/${owner}/${slug}`,
    manifest: `${baseUrl}/api/label/${owner}/${slug}`,
    resource: `${baseUrl}/api/r/${owner}/${slug}`,
    version: `${baseUrl}/api/v/${owner}/${slug}`,
    releases: `${baseUrl}/api/v/${owner}/${slug}/releases`,
    snippet: `${baseUrl}/api/snippet/${owner}/${slug}`,
  };
}

function buildManifest(
  baseUrl: string,
  listing: PublicListing & PricedListing,
  release: ReleaseHead,
  stored: Awaited<ReturnType<typeof findReleaseDocuments>>,
  tree: unknown[],
): Record<string, unknown> {
  const urls = listingUrls(baseUrl, listing.owner, listing.slug);
  const offer = offerFor(listing, release.version);
  return {
    owner: listing.owner,
    slug: listing.slug,
    channel: `${listing.owner}/${listing.slug}`,
    status: listing.status,
    version: release.version,
    artifact_sha256: release.artifactSha256,
    published_at: release.publishedAt.toISOString(),
    price_micro: formatMicroUsdc(offer.amountMicro),
    update_price_micro: formatMicroUsdc(offer.updatePriceMicro),
    resource_endpoint: urls.resource,
    version_url: urls.version,
    attestation_url: attestationUrl(baseUrl, listing.owner, listing.slug, release.version),
    release_log: { url: urls.releases, on_sale: RELEASE_LOG_ON_SALE, cadence_counts: RELEASE_LOG_CADENCE },
    computed: {
      ...(stored?.computed as Record<string, unknown>),
      tree,
      scan: stored?.scan ? toPublicScan(stored.scan as ScanReport) : undefined,
    },
    ...(stored ? withAdvisoryFlag(stored) : {}),
    self_reported: { description: listing.description, trigger_hint: listing.triggerHint },
  };
}
