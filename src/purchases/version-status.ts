import type { AppContext } from '../context.js';
import { verifyWalletSignatureHeader } from '../identity/wallet-signature.js';
import { listingCacheSlot } from '../platform/cache/caches.js';
import { AppError } from '../platform/errors.js';
import { type Prebuilt, prebuilt } from '../platform/http/prebuilt.js';
import { formatMicroUsdc } from '../platform/money/money.js';
import { flaggedVersions } from '../releases/advisory-flags.js';
import { updateOffer, yankedReleasesOf } from '../releases/service.js';
import { withAdvisoryFlag } from '../releases/views.js';
import { resourceUrl } from '../x402/resource-url.js';
import { holdingOf } from './holdings.js';
import { offerFor, priceKind } from './pricing.js';
import { cachedSaleHead } from './sale-heads.js';
import { ScanCountsSchema, type VersionStatus } from './schemas.js';

/**
 * GET /api/v/{owner}/{slug}: the latest version and prices. Entitlement state (`owned`,
 * `entitled`, `price_kind`) only with a valid wallet signature; nothing else reveals it.
 */
export async function versionStatus(
  ctx: AppContext,
  request: { owner: string; slug: string; walletSignature: string | undefined },
): Promise<VersionStatus> {
  const { status } = await publicVersionStatus(ctx, request.owner, request.slug);
  if (request.walletSignature === undefined) return status;
  const wallet = await verifyWalletSignatureHeader(ctx, request.walletSignature);
  const head = (await cachedSaleHead(ctx, request.owner, request.slug))!;
  const { listing, release } = head;
  const holding = await holdingOf(ctx.database, wallet, listing.id);
  const flagged = await flaggedVersions(ctx.database.db, listing.id, holding.versions);
  const yanked = await yankedReleasesOf(ctx.database.db, listing.id, holding.yanked);
  const offer = offerFor(listing, release.version, holding);
  const update =
    offer.kind === 'update'
      ? await updateOffer(ctx.database.db, listing, offer.fromVersion!, offer.version)
      : undefined;
  return {
    ...status,
    owned: holding.versions.includes(release.version),
    entitled: offer.kind === 'owned',
    price_kind: priceKind(offer),
    ...(flagged.length > 0 ? { flagged_holdings: flagged } : {}),
    ...(yanked.length > 0
      ? {
          yanked_holdings: yanked.map((row) => ({
            version: row.version,
            yanked_at: row.yankedAt.toISOString(),
            reason: row.yankReason ?? '',
          })),
        }
      : {}),
    ...(update && offer.kind === 'update'
      ? { update: { from: offer.fromVersion!, to: offer.version, ...update } }
      : {}),
  };
}

/** The version status every anonymous caller sees, serialised once per listing head. */
const publicStatuses = listingCacheSlot<{ status: VersionStatus; doc: Prebuilt }>({
  max: 10_000,
  ttlMs: 1000,
  keyedByListing: true,
});

/** The anonymous version status and its prebuilt body; `404 not_found` without a release on sale. */
export async function publicVersionStatus(
  ctx: AppContext,
  owner: string,
  slug: string,
): Promise<{ status: VersionStatus; doc: Prebuilt }> {
  return ctx.caches.get(publicStatuses).get(`${owner}/${slug}`, async () => {
    const head = await cachedSaleHead(ctx, owner, slug);
    if (!head) throw new AppError('not_found');
    const { listing, release } = head;
    const counts = ScanCountsSchema.safeParse((release.scan as { counts?: unknown } | null)?.counts);
    const listed = offerFor(listing, release.version);
    const status: VersionStatus = {
      owner: listing.owner,
      slug: listing.slug,
      status: listing.status,
      for_sale: listing.status === 'published' && !listing.suspendedAt,
      version: release.version,
      tag: release.tag,
      artifact_sha256: release.artifactSha256,
      published_at: release.publishedAt.toISOString(),
      price_micro: formatMicroUsdc(listed.amountMicro),
      update_price_micro: formatMicroUsdc(listed.updatePriceMicro),
      resource_endpoint: resourceUrl(ctx.config.baseUrl, listing.owner, listing.slug),
      release_log_url: `${ctx.config.baseUrl}/api/v/${listing.owner}/${listing.slug}/releases`,
      ...(counts.success ? { scan: counts.data } : {}),
      ...withAdvisoryFlag(release),
      ...(listing.suspendedAt
        ? { suspended: { reason: listing.suspensionReason ?? '', since: listing.suspendedAt.toISOString() } }
        : {}),
    };
    return { status, doc: prebuilt(status) };
  });
}
