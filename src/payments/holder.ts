import type { IncomingHttpHeaders } from 'node:http';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { verifyWalletSignatureHeader } from '../identity/wallet-signature.js';
import { assertJurisdictionAllowed } from '../platform/compliance.js';
import { decodeCursor, encodeCursor } from '../platform/cursor.js';
import { AppError } from '../platform/errors.js';
import { formatMicroUsdc } from '../platform/money.js';
import { latestPassingRelease, publishedRelease } from '../releases/releases.js';
import { type Grant, grantFor } from './grants.js';
import { holdingOf, isEntitled } from './holdings.js';
import { findListingForSale } from './listing.js';
import { offerFor, pricedListing, priceKind } from './offer.js';
import { resourceUrl } from './payment-required.js';
import { entitlementPage } from './store.js';

/** What holders do: re-fetch owned versions, check the latest version, list what they own. */

type Header = string | string[] | undefined;

/** GET /api/r/{owner}/{slug}/v/{version}: a fresh grant for a version the wallet holds, retired or not. */
export async function fetchOwnedVersion(
  ctx: AppContext,
  request: {
    owner: string;
    slug: string;
    version: string;
    walletSignature: Header;
    headers?: IncomingHttpHeaders;
  },
): Promise<Grant> {
  if (request.headers) assertJurisdictionAllowed(ctx.config.compliance, request.headers);
  const wallet = await verifyWalletSignatureHeader(ctx, request.walletSignature);
  const listing = await findListingForSale(ctx.database.db, request.owner, request.slug);
  const release = listing && (await publishedRelease(ctx.database.db, listing.id, request.version));
  if (!listing || !release) throw new AppError('not_found', { message: 'No such listing or version' });
  const holding = await holdingOf(ctx.database.db, wallet, listing.id);
  if (!isEntitled(holding, release.version)) {
    throw new AppError('not_entitled', {
      message: `The wallet ${wallet} does not own ${listing.owner}/${listing.slug} ${release.version}`,
    });
  }
  return grantFor(ctx, release, { kind: 'owned' });
}

const ScanCounts = z.object({
  blocking: z.number().int(),
  disclosed: z.number().int(),
  review: z.number().int(),
});

export interface VersionStatus {
  owner: string;
  slug: string;
  status: 'published' | 'retired';
  for_sale: boolean;
  version: string;
  tag: string;
  artifact_sha256: string;
  published_at: string;
  price_micro: string;
  update_price_micro: string;
  resource_endpoint: string;
  scan?: { blocking: number; disclosed: number; review: number };
  owned?: boolean;
  entitled?: boolean;
  price_kind?: 'owned' | 'new' | 'update' | 'free';
}

/**
 * GET /api/v/{owner}/{slug}: the latest version and prices. Entitlement state (`owned`,
 * `entitled`, `price_kind`) only with a valid wallet signature; nothing else reveals it.
 */
export async function versionStatus(
  ctx: AppContext,
  request: { owner: string; slug: string; walletSignature: Header },
): Promise<VersionStatus> {
  const listing = pricedListing(await findListingForSale(ctx.database.db, request.owner, request.slug));
  const release = listing && (await latestPassingRelease(ctx.database.db, listing.id));
  if (!listing || !release) throw new AppError('not_found');
  const wallet =
    request.walletSignature === undefined
      ? undefined
      : await verifyWalletSignatureHeader(ctx, request.walletSignature);
  const counts = ScanCounts.safeParse((release.scan as { counts?: unknown } | null)?.counts);
  const listed = offerFor(listing, release.version);
  const status: VersionStatus = {
    owner: listing.owner,
    slug: listing.slug,
    status: listing.status,
    for_sale: listing.status === 'published',
    version: release.version,
    tag: release.tag,
    artifact_sha256: release.artifactSha256,
    published_at: release.publishedAt.toISOString(),
    price_micro: formatMicroUsdc(listed.amountMicro),
    update_price_micro: formatMicroUsdc(listed.updatePriceMicro),
    resource_endpoint: resourceUrl(ctx.config.baseUrl, listing.owner, listing.slug),
    ...(counts.success ? { scan: counts.data } : {}),
  };
  if (!wallet) return status;
  const holding = await holdingOf(ctx.database.db, wallet, listing.id);
  const offer = offerFor(listing, release.version, holding);
  return {
    ...status,
    owned: holding.versions.includes(release.version),
    entitled: offer.kind === 'owned',
    price_kind: priceKind(offer),
  };
}

export const ENTITLEMENTS_PAGE_SIZE = 50;
const CursorShape = z.object({ c: z.string(), l: z.string().uuid(), v: z.string() });

export interface EntitlementItem {
  owner: string;
  slug: string;
  version: string;
  kind: 'new' | 'update';
  all_versions: boolean;
  purchase_id: string;
  transaction: string | null;
  acquired_at: string;
  fetch_url: string;
}

/** GET /api/entitlements: everything the signing wallet holds, newest first. */
export async function listEntitlements(
  ctx: AppContext,
  request: { walletSignature: Header; cursor?: string; limit?: number },
): Promise<{ wallet: string; items: EntitlementItem[]; next_cursor: string | null }> {
  const wallet = await verifyWalletSignatureHeader(ctx, request.walletSignature);
  const limit = request.limit ?? ENTITLEMENTS_PAGE_SIZE;
  const after = request.cursor ? decodeCursor(request.cursor, CursorShape) : undefined;
  const rows = await entitlementPage(
    ctx.database.db,
    wallet.toLowerCase(),
    after && { createdAt: new Date(after.c), listingId: after.l, version: after.v },
    limit + 1,
  );
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    wallet,
    items: page.map((row) => ({
      owner: row.owner,
      slug: row.slug,
      version: row.version,
      kind: row.kind,
      all_versions: row.allVersions,
      purchase_id: row.purchaseId,
      transaction: row.transaction,
      acquired_at: row.createdAt.toISOString(),
      fetch_url: `${resourceUrl(ctx.config.baseUrl, row.owner, row.slug)}/v/${row.version}`,
    })),
    next_cursor:
      rows.length > limit && last
        ? encodeCursor({ c: last.createdAt.toISOString(), l: last.listingId, v: last.version })
        : null,
  };
}
